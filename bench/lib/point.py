"""One measured point as `rate=... server_us_per_rt=... p50_us=... p99_us=...`, the fields the
A/B scripts (ini-ab.sh, tls-ab.sh) print and summarise.

    ... | python3 bench/lib/point.py jms      the RESULT line of the JMS load generator (stdin)
    python3 bench/lib/point.py perf FILE     the first step of a `ferry perf --json` file

An invalid `ferry perf` step (errors, refusals) is marked `failed=invalid`, which the
summaries leave out.
"""
import json
import sys


def jms():
    for line in sys.stdin:
        if line.startswith("RESULT "):
            f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            print("rate=%s server_us_per_rt=%s p50_us=%s p99_us=%s" % (
                f.get("rate"), f.get("broker_cpu_us_per_op"), f.get("p50_us"), f.get("p99_us")))


def perf(path):
    step = json.load(open(path))["series"][0]["steps"][0]
    w = step["window"]
    print("rate=%.0f server_us_per_rt=%.1f p50_us=%.0f p99_us=%.0f%s" % (
        w["rate"], w["server_us_per_rt"], step["latency"]["p50_us"], step["latency"]["p99_us"],
        "" if step.get("valid", True) else " failed=invalid"))


if __name__ == "__main__":
    if sys.argv[1:2] == ["jms"]:
        jms()
    elif sys.argv[1:2] == ["perf"] and len(sys.argv) == 3:
        perf(sys.argv[2])
    else:
        sys.exit(__doc__)
