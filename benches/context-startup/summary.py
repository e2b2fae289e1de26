#!/usr/bin/env python3
"""One line of medians for a round of ctxbench runs (run.sh, inproc.sh): LABEL JOBS START END FILE
[context]. FILE holds ctxbench's lines (mode init ctx alloc rel total, ms); START and END are the
round's wall clock, s. Without `context` the rate is per process (run.sh); with it, per context
(inproc.sh, where one process makes several)."""
import statistics as st
import sys

l, j, s, e, f = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
per_context = sys.argv[6:] == ["context"]
rows = [list(map(float, x.split()[1:])) for x in open(f) if x[0].isalpha() and "failed" not in x]
if not rows:
    print(l, "no rows")
    sys.exit()
med = [st.median(c) for c in zip(*rows)]
if per_context:
    head = "%-22s jobs %2d contexts %3d wall %6.2f s  per-context %5.0f ms"
else:
    head = "%-28s jobs %2d n %2d wall %6.2f s  per-proc %5.0f ms"
tail = " | init %5.0f ctx %5.0f alloc %4.0f rel %4.0f total %5.0f (medians, ms)"
print((head + tail) % (l, j, len(rows), e - s, (e - s) * 1000 / len(rows), *med))
