"""PyInstaller runtime hook: runs before the app's own code in the frozen bundle.

The bundle carries its models (the ONNX embedder, the static embedder, the judge), so no
library may try the network (model2vec and tokenizers use the Hugging Face hub client).
"""

import os

for _name, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
):
    os.environ.setdefault(_name, _value)
