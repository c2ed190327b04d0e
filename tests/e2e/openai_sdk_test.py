#!/usr/bin/env python3
"""inferscope-cli serve with the official OpenAI Python SDK: chat whole and streamed, text
completions, logprobs and usage, as an application using the SDK sees them.

    openai_sdk_test.py INFERSCOPE_CLI MODEL.gguf

Starts the server on a free port, runs every check, stops it with SIGTERM (it must drain and exit 0)
and exits non-zero naming the first check that failed.
"""
import os
import signal
import subprocess
import sys
import time

import openai

from serve_process import start_serve


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def main():
    cli, model = sys.argv[1], sys.argv[2]
    server, base_url = start_serve(cli, model)
    try:
        client = openai.OpenAI(base_url=base_url, api_key="none", max_retries=0, timeout=120)
        name = os.path.splitext(os.path.basename(model))[0]
        models = client.models.list()
        check([m.id for m in models.data] == [name], f"models.list(): {models}")

        messages = [{"role": "user", "content": "Name three colours."}]
        whole = client.chat.completions.create(model=name, messages=messages, max_tokens=24, temperature=0)
        text = whole.choices[0].message.content
        check(whole.object == "chat.completion" and whole.choices[0].message.role == "assistant", f"{whole}")
        check(text and whole.choices[0].finish_reason in ("stop", "length"), f"{whole}")
        check(whole.usage.completion_tokens > 0 and whole.usage.total_tokens ==
              whole.usage.prompt_tokens + whole.usage.completion_tokens, f"usage {whole.usage}")

        pieces, usage, finish = [], None, None
        for chunk in client.chat.completions.create(model=name, messages=messages, max_tokens=24, temperature=0,
                                                    stream=True, stream_options={"include_usage": True}):
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                pieces.append(choice.delta.content or "")
                finish = choice.finish_reason or finish
        check("".join(pieces) == text, f"streamed {''.join(pieces)!r} != whole {text!r}")
        check(finish == whole.choices[0].finish_reason, f"streamed finish {finish}")
        check(usage is not None and usage.completion_tokens == whole.usage.completion_tokens, f"streamed usage {usage}")

        lp = client.chat.completions.create(model=name, messages=messages, max_tokens=5, temperature=0, logprobs=True,
                                            top_logprobs=3)
        content = lp.choices[0].logprobs.content
        check(len(content) == lp.usage.completion_tokens, f"{len(content)} logprobs for {lp.usage.completion_tokens} tokens")
        check(all(len(t.top_logprobs) == 3 and t.logprob <= 0 for t in content), f"{content}")
        check(all(t.top_logprobs[0].logprob == t.logprob for t in content), "greedy: each token is its top one")

        completion = client.completions.create(model=name, prompt="Once upon a time", max_tokens=8, temperature=0,
                                               logprobs=2)
        check(completion.object == "text_completion" and completion.choices[0].finish_reason == "length", f"{completion}")
        check("".join(completion.choices[0].logprobs.tokens) == completion.choices[0].text, f"{completion}")
        check(completion.usage.completion_tokens == 8, f"{completion.usage}")
        streamed = "".join(c.choices[0].text for c in client.completions.create(
            model=name, prompt="Once upon a time", max_tokens=8, temperature=0, stream=True) if c.choices)
        check(streamed == completion.choices[0].text, f"streamed {streamed!r}")

        try:
            client.chat.completions.create(model=name, messages=messages, n=2)
            check(False, "n=2 was accepted")
        except openai.BadRequestError as e:
            check(e.body and e.body.get("param") == "n", f"n=2: {e.body}")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    check(code == 0, f"the server exited {code} after SIGTERM")
    print("openai SDK", openai.__version__, "against", base_url, "passed")


if __name__ == "__main__":
    main()
