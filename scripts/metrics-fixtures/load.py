"""The scripted load, as data. Same load for every release; the drivers tell each
release's metrics code what happened, step by step (sim.py turns this into steps).

Times are seconds since the server started. Scrape 1 at T_SCRAPE1 (everything before it
is warm-up history), scrape 2 at T_SCRAPE2 = T_SCRAPE1 + INTERVAL_S.
"""

MODEL = "Qwen/Qwen3-8B"
MAX_MODEL_LEN = 40960
BLOCK_SIZE = 16
NUM_GPU_BLOCKS = 2048          # per engine: 32768 tokens of KV cache
MAX_RUNNING = 4                # max_num_seqs per engine
STEP_S = 0.05                  # one engine step every 50 ms
NUM_SPEC_TOKENS = 3            # drafter proposes 3 tokens per decode step
# accepted draft tokens per decode step, cycled per request (offset by request number)
ACCEPT_PATTERN = [2, 3, 1, 0, 3, 2, 1]

T_SCRAPE1 = 10.0
INTERVAL_S = 5.0
T_SCRAPE2 = T_SCRAPE1 + INTERVAL_S
EPOCH = 1767225600.0           # wall clock of t = 0 (2026-01-01T00:00:00Z), for _created / mostrecent

# (id, engine/rank, api_server (client), arrival_s, prompt_tokens, cached_prompt_tokens,
#  max_tokens, output_tokens, priority)
# cached_prompt_tokens are whole 16-token blocks found in the prefix cache.
REQUESTS = [
    # warm-up history, engine 0
    (1, 0, 0, 0.20, 812, 0, 256, 96, 0),
    (2, 0, 1, 0.90, 1530, 512, 256, 130, 0),
    (3, 0, 0, 2.10, 640, 512, 128, 128, 0),
    (4, 0, 1, 3.40, 2210, 0, 512, 170, 0),
    (5, 0, 0, 5.00, 930, 896, 256, 88, 0),
    (6, 0, 1, 6.30, 1204, 1024, 256, 150, 0),
    (7, 0, 0, 8.10, 3050, 2048, 1024, 400, 0),   # still running at scrape 1 and 2
    # warm-up history, engine 1
    (11, 1, 1, 0.40, 700, 0, 256, 110, 0),
    (12, 1, 0, 1.60, 1420, 1408, 256, 90, 0),
    (13, 1, 1, 2.80, 520, 0, 128, 128, 0),
    (14, 1, 0, 4.20, 1880, 1024, 512, 210, 0),
    (15, 1, 1, 7.00, 990, 0, 256, 120, 0),
    (16, 1, 0, 8.80, 1650, 1536, 256, 140, 0),
    # scripted 5 s between the scrapes, engine 0: a burst that queues
    (21, 0, 0, 10.30, 1024, 1024, 256, 60, 0),
    (22, 0, 1, 10.60, 2400, 1200 // 16 * 16, 256, 75, 1),
    (23, 0, 0, 11.50, 800, 0, 128, 50, 0),
    (24, 0, 1, 13.90, 1500, 768, 512, 300, 1),   # still running at scrape 2
    (25, 0, 0, 14.00, 600, 0, 256, 200, 0),
    (26, 0, 1, 14.10, 1200, 1024, 256, 200, 1),
    (27, 0, 0, 14.20, 950, 0, 256, 200, 0),       # waiting at scrape 2
    (28, 0, 1, 14.30, 700, 512, 256, 200, 1),     # waiting at scrape 2
    # scripted 5 s, engine 1
    (31, 1, 1, 10.20, 1300, 0, 256, 90, 0),
    (32, 1, 0, 11.00, 2000, 1984, 256, 80, 1),
    (33, 1, 1, 11.40, 3600, 0, 512, 110, 0),      # preempted once at 12.0 (see PREEMPT)
    (34, 1, 0, 12.60, 900, 640, 256, 60, 0),
    (35, 1, 1, 13.50, 1100, 0, 512, 300, 1),      # still running at scrape 2
]

# (engine, request id, time): the engine preempts that running request at that step
# (one preemption in the scripted interval)
PREEMPT = [(1, 33, 12.0)]

FIELDS = ("rid", "engine", "client", "arrival", "prompt", "cached", "max_tokens",
          "output", "priority")


def requests():
    return [dict(zip(FIELDS, r)) for r in REQUESTS]
