# Policy engine: verdicts per second (one core).  Goal: >= 1,000,000/s with 100 rules.
"$BUILD/bench/bench_verdict"
