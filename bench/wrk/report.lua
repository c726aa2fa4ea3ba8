-- Appended to every scenario's script: wrk's totals as one JSON line the bench reads. Latencies are in
-- microseconds; errors are socket errors, timeouts and responses with a status above 399.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%d,"durationUs":%d,"errors":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
