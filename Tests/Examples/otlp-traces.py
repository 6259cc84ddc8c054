#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver for the app examples' test, and the check of what it received.

    otlp-traces.py serve --port PORT --out FILE
        Answers POST /v1/traces (OTLP/HTTP with JSON bodies, as swift-otel sends with
        OTEL_EXPORTER_OTLP_PROTOCOL=http/json): each body appended to FILE as one line, answered 200 `{}`. Anything
        else: 404. Runs until killed.

    otlp-traces.py check FILE --route NAME --secret S [--secret S ...]
        Prints one "ok: …" or "FAIL: …" line per check (Tests/Support/checks.sh relays them):
          - a server span whose name is NAME (the request's span, Vapor's or Hummingbird's tracing middleware);
          - in that request's trace, an INSERT span of the database (db.system.name = sqlite), and every database span
            of the trace below the request's span (Fluent's own `fluent.query` span between them);
          - no span name or attribute holds any S (the key, a todo's title: a bound value);
        and, first, the same checks on three planted copies of FILE, each of which must fail its check: one with the
        database spans' parent links cut, one with a single database span other than the INSERT cut loose, one with
        a secret planted into a span's attributes (a check that cannot fail would pass on anything).
"""
import argparse
import copy
import http.server
import json
import sys


def serve(port, out):
    class Receiver(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the exporter's connection is reused, as a collector's would be

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/traces":
                self.send_error(404)
                return
            with open(out, "ab") as handle:
                handle.write(body.replace(b"\n", b" ") + b"\n")
            answer = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()


def load(path):
    """Every export request in the file, parsed."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def spans(requests):
    for request in requests:
        for resource in request.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                yield from scope.get("spans", [])


def attribute(span, key):
    for item in span.get("attributes", []):
        if item.get("key") == key:
            value = item.get("value", {})
            return next(iter(value.values()), None)
    return None


def is_server(span):
    return span.get("kind") in (2, "SPAN_KIND_SERVER")


def checks(requests, route, secrets):
    """[(passed, text)] for the checks the module's docstring lists."""
    found = list(spans(requests))
    by_id = {span.get("spanId"): span for span in found}
    results = []
    servers = [span for span in found if is_server(span) and span.get("name") == route]
    results.append((bool(servers), f"a server span named '{route}' ({len(found)} spans received)"))
    # The database's spans in the requests' traces (the boot's migration runs in traces of its own, under Fluent's
    # root `fluent.query` spans): each must be below its request's span, at most four levels down (Fluent's
    # `fluent.query` between them; statements and the `transaction` span are siblings under it).
    traces = {span.get("traceId") for span in servers}
    database = [span for span in found if span.get("traceId") in traces and attribute(span, "db.system.name") == "sqlite"]

    def below_request(span):
        parent = by_id.get(span.get("parentSpanId"))
        for _ in range(4):
            if parent is None:
                return False
            if parent in servers and parent.get("traceId") == span.get("traceId"):
                return True
            parent = by_id.get(parent.get("parentSpanId"))
        return False

    linked = [span for span in database if below_request(span)]
    inserts = [span for span in linked if attribute(span, "db.operation.name") == "INSERT"]
    results.append((bool(inserts) and len(linked) == len(database),
                    f"the create's INSERT span, and every database span of the '{route}' request's trace, below "
                    f"that request's span ({len(inserts)} INSERT, {len(linked)} of {len(database)} below it)"))
    text = json.dumps(requests)
    leaked = [secret for secret in secrets if secret in text]
    results.append((not leaked, f"no span holds the key or a todo's title ({len(secrets)} secrets, "
                                f"{len(leaked)} found)"))
    return results


def check(path, route, secrets):
    requests = load(path)
    failed = 0
    # The controls: each planted copy must fail the check it plants for.
    cut = copy.deepcopy(requests)
    for span in spans(cut):
        if attribute(span, "db.system.name") == "sqlite":
            span["parentSpanId"] = ""
    # One database span that is not the INSERT (a COMMIT, the transaction) cut loose: the "every span below the
    # request" half must fail alone.
    loose = copy.deepcopy(requests)
    traces = {span.get("traceId") for span in spans(loose) if is_server(span) and span.get("name") == route}
    for span in spans(loose):
        if span.get("traceId") in traces and attribute(span, "db.system.name") == "sqlite" \
                and attribute(span, "db.operation.name") != "INSERT":
            span["parentSpanId"] = ""
            break
    planted = copy.deepcopy(requests)
    for span in spans(planted):
        span.setdefault("attributes", []).append({"key": "planted", "value": {"stringValue": secrets[0]}})
        break
    for name, copy_, index in (("the database spans' parent links cut", cut, 1),
                               ("one database span other than the INSERT cut loose", loose, 1),
                               ("a secret planted", planted, 2)):
        passed, text = checks(copy_, route, secrets)[index]
        if passed:
            failed += 1
            print(f"FAIL: control: with {name}, the check still passes: {text}")
        else:
            print(f"ok: control: with {name}, the check fails ({text})")
    for passed, text in checks(requests, route, secrets):
        print(("ok: " if passed else "FAIL: ") + text)
        failed += not passed
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve")
    serving.add_argument("--port", type=int, required=True)
    serving.add_argument("--out", required=True)
    checking = commands.add_parser("check")
    checking.add_argument("file")
    checking.add_argument("--route", required=True)
    checking.add_argument("--secret", action="append", required=True)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port, args.out)
    else:
        sys.exit(check(args.file, args.route, args.secret))


if __name__ == "__main__":
    main()
