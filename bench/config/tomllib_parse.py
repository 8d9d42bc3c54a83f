"""The peer for loading the alarm file: Python's tomllib parsing the same file (parsing only,
no validation). Prints the median and the fastest of RUNS parses, in milliseconds."""
import statistics
import sys
import time
import tomllib

path, runs = sys.argv[1], int(sys.argv[2])
text = open(path, encoding="utf-8").read()
times = []
for _ in range(runs):
    start = time.perf_counter()
    tomllib.loads(text)
    times.append((time.perf_counter() - start) * 1000)
print("%.2f %.2f" % (statistics.median(times), min(times)))
