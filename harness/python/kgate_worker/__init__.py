"""kgate_worker: the Python worker of kgate (protocol v1) for KernelBench problems.

Run as ``python3 -m kgate_worker``. It speaks newline-delimited JSON over stdin/stdout
(docs/protocol.md), measures candidates and baselines, and reports numbers; the gate
policy lives in the orchestrator.
"""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
RUNNER_NAME = "kgate_worker"
