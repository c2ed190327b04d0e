"""inferscope-cli serve as a child process, for the tests that drive it with real clients."""
import subprocess
import sys


def start_serve(cli, model):
    """Starts `cli serve` on MODEL on a free port; returns the process and its OpenAI base URL
    (http://127.0.0.1:PORT/v1), read from the line it prints once listening. Exits naming what it
    printed when it does not start."""
    server = subprocess.Popen([cli, "serve", "-m", model, "--port", "0", "-c", "2048"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = server.stdout.readline()  # "inferscope-cli serve: NAME at http://127.0.0.1:PORT/v1 (...)"
    if " at http://" not in line:
        server.kill()
        sys.exit(f"the server did not start: {line}{server.stdout.read()}")
    return server, line.split(" at ")[1].split(" ")[0]
