"""What the e2e scripts' Python checks read of a `kgate run` output directory."""
import glob
import json
import os


def records(out: str) -> dict:
    """The result records under OUT/results, by problem id."""
    recs = {}
    for f in glob.glob(os.path.join(out, "results", "**", "*.json"), recursive=True):
        with open(f, encoding="utf-8") as fh:
            r = json.load(fh)
        recs[r["problem"]] = r
    return recs
