"""The chat-template markers no stored text may carry into a prompt, family by family.

Each entry lists the markers of one family's chat template as the template writes them (the
families the docs name: Qwen, Llama, Gemma, Mistral, DeepSeek, Phi, gpt-oss for Codex, and
Claude-style transcripts). `sanitize.py` builds its detector from this data, by shape:
`<|name|>` special tokens (DeepSeek's `<｜name｜>` folds to it), `<name …>` / `</name>` tags,
`[NAME]` / `[/NAME]` control tokens, `<<NAME>>`, and `Name:` or `### Name:` speakers at the
start of a line. A marker added here is detected in every disguise the detector folds away
(case, spacing, invisible characters, look-alike brackets and letters).
"""

from __future__ import annotations

FAMILIES: dict[str, tuple[str, ...]] = {
    # Qwen 2 / 2.5 / 3 (ChatML): turns, end of text, the tool list of the system prompt, tool
    # calls and their results, Qwen3's reasoning, the coder models' fill-in-the-middle and
    # repository tokens, the vision tokens
    "Qwen": ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tools>", "</tools>",
             "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>",
             "</think>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
             "<|repo_name|>", "<|file_sep|>", "<|vision_start|>", "<|vision_end|>",
             "<|image_pad|>"),
    # Llama 3.x: begin/end of text, the header around each role name, end of turn / message,
    # the code interpreter's tag; Llama 4's headers and end of turn; Llama 2's sentence
    # tokens, [INST] and <<SYS>>
    "Llama": ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
              "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>",
              "<|header_start|>", "<|header_end|>", "<|eot|>", "<s>", "</s>", "[INST]",
              "[/INST]", "<<SYS>>", "<</SYS>>"),
    # Gemma 2 / 3: begin/end of sequence, turns (roles user and model), image slots
    "Gemma": ("<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
              "<end_of_image>"),
    # Mistral (v3 / v7 / v11 tokenizers, Magistral): sentence tokens, instructions, the system
    # prompt, the tool list, tool calls with their arguments and ids, tool results,
    # reasoning, images
    "Mistral": ("<s>", "</s>", "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
                "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[ARGS]",
                "[CALL_ID]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CONTENT]", "[THINK]",
                "[/THINK]", "[IMG]"),
    # DeepSeek V3 / R1 (fullwidth bars, ▁ for spaces): sentence and role tokens, tool calls
    # and outputs, fill-in-the-middle, R1's reasoning; DeepSeek-Coder v1's Alpaca-style
    # headings and end of turn
    "DeepSeek": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>",
                 "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
                 "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
                 "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>",
                 "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>", "<｜fim▁begin｜>",
                 "<｜fim▁hole｜>", "<｜fim▁end｜>", "<think>", "</think>", "<|EOT|>",
                 "### Instruction:", "### Response:"),
    # Phi-3 / 3.5: role tokens and end of turn; Phi-4: ChatML with <|im_sep|>; Phi-4-mini's
    # tool tokens; Phi-4-reasoning's reasoning
    "Phi": ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|endoftext|>",
            "<|im_start|>", "<|im_sep|>", "<|im_end|>", "<|tool|>", "<|/tool|>",
            "<|tool_call|>", "<|/tool_call|>", "<|tool_response|>", "<think>", "</think>"),
    # gpt-oss (OpenAI's harmony format, Codex's default local model): message start and end,
    # channels, the content type of a call, return and call ends
    "gpt-oss": ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>",
                "<|return|>", "<|call|>"),
    # Claude-style transcripts: the speakers, tool use written as XML (function calls, an
    # invoke with its parameters, their results), extended thinking, Claude Code's reminders
    "Claude": ("Human:", "Assistant:", "<function_calls>", "</function_calls>",
               '<invoke name="…">', "</invoke>", '<parameter name="…">', "</parameter>",
               "<function_results>", "</function_results>", "<result>", "</result>",
               "<thinking>", "</thinking>", "<system-reminder>", "</system-reminder>"),
    # Role tags any prompt may use to mark a turn: system and developer prompts, the user,
    # the model, tools, instructions and context
    "role tags": ("<system>", "</system>", "<developer>", "<instructions>", "<instruction>",
                  "<user>", "</user>", "<human>", "<assistant>", "</assistant>", "<model>",
                  "<tool>", "<function>", "<context>"),
}

# Tag names that are also ordinary type names in code (`List<User>`, `Task<Result>`): their
# opening tag counts only where it cannot be a type argument (not right after a word or a
# dot); their closing tag always counts. Special tokens of a vocabulary are never listed here.
TYPE_WORDS: frozenset[str] = frozenset(
    {"user", "tool", "tools", "model", "function", "context", "result", "parameter"})
