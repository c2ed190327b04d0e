"""Pinned server releases and the prometheus_client they are driven with.

Each release names the one PyPI file its metrics code is read from and the sha256 of
that file as downloaded (pypi_files.fetch() refuses a file whose hash differs).
"""

from dataclasses import dataclass

PROMETHEUS_CLIENT_VERSION = "0.26.0"

CACHE_DIR_NAME = "inferscope/metrics-fixtures"  # under ~/.cache


@dataclass(frozen=True)
class Release:
    server: str      # vllm | sglang
    version: str
    filename: str    # PyPI file the sources are taken from
    sha256: str

    @property
    def key(self) -> str:
        return f"{self.server}-{self.version}"


RELEASES = [
    Release("vllm", "0.12.0", "vllm-0.12.0.tar.gz",
            "dc2863be80260f378f1e72f9b82b4009610e434d05fdd7067383b231b89c4f4a"),
    Release("vllm", "0.9.1", "vllm-0.9.1.tar.gz",
            "c5ad11603f49a1fad05c88debabb8b839780403ce1b51751ec4da4e8a838082c"),
    Release("vllm", "0.10.2", "vllm-0.10.2.tar.gz",
            "57608f44cf61f5d80fb182c98e06e524cb2925bb528258a7b247c8e43a52d13e"),
    Release("vllm", "0.34.0", "vllm-0.34.0.tar.gz",
            "fcad848b246a9d8652b47e6425af92334dc02492f9802720f54e27b823cf0113"),
    Release("sglang", "0.5.23", "sglang-0.5.23-cp312-cp312-manylinux_2_34_x86_64.whl",
            "8d257a319395b322bb1be327d05e5528859358153c8563b04c0a4a3c8af164b6"),
    Release("sglang", "0.4.10.post2", "sglang-0.4.10.post2.tar.gz",
            "bad519d1c80f7e89ba8118b3d8dc647d587e8d9526ca2118fdb9c695ad42b6fd"),
    Release("vllm", "0.9.2", "vllm-0.9.2.tar.gz",
            "6b0d855ea8ba18d76364c9b82ea94bfcaa9c9e724055438b5733e4716ed104e1"),
    Release("vllm", "0.10.1.1", "vllm-0.10.1.1.tar.gz",
            "3099824ee4bdaa14c4c4f7178a092101a0ec206d4c9371edf295849b2b730a39"),
    Release("vllm", "0.11.0", "vllm-0.11.0.tar.gz",
            "f435a64c24e9c4178d657a76f8edd8548ddc444012f7d06a9f79ac3a6392bfae"),
    Release("sglang", "0.5.3", "sglang-0.5.3.tar.gz",
            "959e3af5012c60725392e261330b1c105d2a5036b1f98b772bcd64a298b5b5d2"),
    Release("sglang", "0.5.4", "sglang-0.5.4.tar.gz",
            "897a88edad78ddd8109e2f4e152d6481518c1eaddaf1cdcfac60545208bbe465"),
]


def by_key(key: str) -> Release:
    for r in RELEASES:
        if r.key == key:
            return r
    raise KeyError(key)
