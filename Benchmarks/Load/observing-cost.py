#!/usr/bin/env python3
"""Where an observed server's extra CPU goes: two profile.sh folders of the same mix, connections and storage, one
of the plain `encrypted` server and one of an observed variant, compared per request.

    PROFILE_WORK=/tmp/plain    Benchmarks/Load/profile.sh encrypted         write 16
    PROFILE_WORK=/tmp/observed Benchmarks/Load/profile.sh encrypted-sampled write 16
    Benchmarks/Load/observing-cost.py /tmp/plain /tmp/observed

perf samples the server's CPU at a fixed rate, so samples per 1,000 requests answered is CPU per request, whatever the
machine's load. Each sample is given to one owner by its call stack (leaf to root):
  - SQLCipherKit's observing: a frame of the core's ConnectionObservation (hooks, events) or the bridge's
    ServerObserver and Instruments, and the span and metric calls they make;
  - a span started, updated or ended (swift-distributed-tracing, swift-otel) by FluentKit's `fluent.query`
    (DatabaseQuery.withTracing) or by Vapor's TracingMiddleware, found by the first of them above the span call;
  - swift-otel's handling of ended spans and their export (its event stream, batch processor, exporter, OTLP
    encoding and HTTP client), on its own tasks;
  - metrics outside SQLCipherKit (swift-prometheus, Vapor's request metrics);
  - the rest: the app, the engine, NIO, the kernel, which an observed server also runs more of (more allocation,
    more threads woken): its difference is the indirect cost.
"""
import os
import re
import subprocess
import sys

OURS = re.compile(r"ConnectionObservation\.|ServerObserver|SQLCipherKitObservability|WriterGate\.report")
SPAN_CALL = re.compile(r"startSpan|startAnySpan|updateAttributes|OTelSpan|OTelTracer|Span\.end|setStatus|"
                       r"recordError|SpanAttributes|W3CTraceContext|OTelRandomIDGenerator|Instrument\.extract|"
                       r"InstrumentationContext")
FLUENT_SPANS = re.compile(r"DatabaseQuery\.withTracing|withTracing")
VAPOR_SPANS = re.compile(r"TracingMiddleware")
EXPORT = re.compile(r"OTelTracer\.run|OTelTracer\.process|OTelTracer.*\.Event|OTelSpanProcessor|"
                    r"OTelBatchSpanProcessor|OTelSimpleSpanProcessor|Exporter|OTLP|Opentelemetry_Proto|SwiftProtobuf|"
                    r"AsyncHTTPClient|HTTPClient")
METRICS = re.compile(r"Prometheus|CoreMetrics|MetricsSystem|\bMetrics\.|Timer\.record|Counter\.increment")

OWNERS = [
    "SQLCipherKit's observing (core hooks and events, bridge metrics and spans)",
    "FluentKit's fluent.query spans",
    "Vapor's request spans (TracingMiddleware)",
    "other span calls",
    "swift-otel's span stream and export (batching, encoding, HTTP)",
    "metrics outside SQLCipherKit (swift-prometheus, Vapor's)",
    "the rest (app, engine, NIO, kernel)",
]


def owner(stack):
    """The owner of one sample; `stack` lists its frames leaf first."""
    if any(OURS.search(frame) for frame in stack):
        return OWNERS[0]
    if any(EXPORT.search(frame) for frame in stack):
        return OWNERS[4]
    for index, frame in enumerate(stack):
        if SPAN_CALL.search(frame):
            for above in stack[index:]:
                if FLUENT_SPANS.search(above):
                    return OWNERS[1]
                if VAPOR_SPANS.search(above):
                    return OWNERS[2]
            return OWNERS[3]
    if any(METRICS.search(frame) for frame in stack):
        return OWNERS[5]
    return OWNERS[6]


def profile(folder):
    """Samples per owner and the requests wrk counted, for one profile.sh folder."""
    result = open(os.path.join(folder, "result.txt")).read()
    requests = int(re.search(r"requests=(\d+)", result).group(1))
    script = subprocess.run(["perf", "script", "-i", os.path.join(folder, "perf.data"), "-F", "ip,sym"],
                            capture_output=True, text=True, check=True).stdout
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input=script, capture_output=True,
                               text=True, check=True).stdout
    counts = {name: 0 for name in OWNERS}
    stack = []
    for line in demangled.splitlines() + [""]:
        if line.strip():
            parts = line.strip().split(" ", 1)
            stack.append(parts[1] if len(parts) > 1 else parts[0])
        elif stack:
            counts[owner(stack)] += 1
            stack = []
    return counts, requests


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: observing-cost.py PLAIN_FOLDER OBSERVED_FOLDER")
    (plain, plain_requests), (observed, observed_requests) = profile(sys.argv[1]), profile(sys.argv[2])
    per = lambda counts, requests, name: counts[name] * 1000.0 / requests
    plain_total = sum(plain.values()) * 1000.0 / plain_requests
    observed_total = sum(observed.values()) * 1000.0 / observed_requests
    extra = observed_total - plain_total
    print(f"requests: not observed {plain_requests}, observed {observed_requests}")
    print(f"CPU samples per 1,000 requests: not observed {plain_total:.0f}, observed {observed_total:.0f} "
          f"(ratio {observed_total / plain_total:.2f})")
    print(f"{'':60s} {'not obs.':>9s} {'observed':>9s} {'extra':>7s} {'of extra':>8s}")
    for name in OWNERS:
        before, after = per(plain, plain_requests, name), per(observed, observed_requests, name)
        share = (after - before) / extra * 100 if extra > 0 else 0.0
        print(f"{name[:60]:60s} {before:9.1f} {after:9.1f} {after - before:7.1f} {share:7.0f} %")


if __name__ == "__main__":
    main()
