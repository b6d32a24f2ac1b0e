"""python3 -m kgate_worker: serve protocol v1 on stdin/stdout until EOF or shutdown."""

import os
import sys

from .worker import main

if __name__ == "__main__":
    rc = main()
    # Skip interpreter teardown: compile-worker pools or candidate threads must not keep
    # a finished worker alive (the protocol stream is already flushed).
    sys.stderr.flush()
    os._exit(rc)
