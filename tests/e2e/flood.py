"""A job that floods its log: N numbered lines (default 200,000, ~11 MB), in bursts over a few seconds.

    python flood.py [N]

Bursts with short pauses between them keep the job running for a while, so the browser tests can check
the page while the pane is still streaming. The last line is "line N: done".
"""

import sys
import time

total = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
bursts = 10
out = sys.stdout
for i in range(1, total):
    out.write(f"line {i}: the quick brown fox jumps over the lazy dog {i * 7919 % 100003:06d}\n")
    if i % (total // bursts) == 0:
        out.flush()
        time.sleep(0.3)
out.write(f"line {total}: done\n")
out.flush()
