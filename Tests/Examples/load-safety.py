#!/usr/bin/env python3
"""Nothing lost under load, and no memory kept per request: a todo app's server (Examples/VaporTodo) driven over
HTTP as a service is, from the Python standard library only.

    load-safety.py --data DIR --key-file FILE -- PROGRAM ARGUMENT…     ("{port}" in an argument: the port)

The server runs with TODO_DATABASE in DIR and its key from TODO_KEY_FILE (never in an argument or a variable's
value), its output in DIR/server-N.log. First the controls, then three rounds, each printing its numbers and an
"ok: NAME" or "FAIL: NAME" line per check (the calling script counts those):

  0. Controls (issue 45), in every run: the same rounds, shorter, on a stub server (this script with --stub-server,
     the todo API in a few lines of the standard library) with a planted fault. With none, every check passes; a
     server answering 500 to every tenth create fails the "answered 201 or not at all" check, and only it; one
     answering every tenth create 201 with a body that is no todo (the clients reading it die) fails the same
     check; one keeping 1 KiB a request fails the memory check, and only it. A control that comes out otherwise
     is a FAIL: line: the checks could no longer see what they are there to see.
  1. SIGTERM mid-load: CLIENTS threads, each on a keep-alive connection, create todos (POST /todos, a title unique
     to the request) as fast as the server answers. Every 201 is recorded with its id (acknowledged); every request
     sent whose answer never came (the connection reset or closed under it) is recorded by its title (outcome
     unknown); a request refused before it was sent is neither. Any other answer (a 500, a 503, a 201 for another
     title) is a failure, and so is a client thread that ends on an exception: the error budget under the create
     load is zero. After LOAD seconds the server gets SIGTERM, as systemd stops a service; it must exit with status
     0. Restarted on the same file, GET /todos must list every acknowledged todo under its id and title (lost: those
     it does not); the unknown ones it lists are counted too (unacknowledged but committed: what the server did for
     a client that never heard back).
  2. SIGKILL mid-load: the same on the restarted server, stopped with SIGKILL (no shutdown at all), restarted and
     checked the same way (round 1's todos too). A commit's WAL frames are written before the 201 is sent, and the
     kernel keeps them when the process dies: a SIGKILL costs only the requests in flight, whose clients never hear
     back (some of them committed). What synchronous=EXTRA (the app's default) adds, an fsync before each
     acknowledgement, is for a power cut or a kernel crash (Tests/Support/PowerLossVFS), not for a kill.
  3. Memory: a fresh file, CLIENTS threads doing a mix (per 20 requests: 2 creates, 2 deletes, an update, a list of
     the table, 14 reads; the table stays near CLIENTS * 8 rows, so a list costs the same at the end as at the
     start); the server's resident memory (VmRSS) after 10,000 requests and after every 10,000 more up to 100,000,
     every client idle at each point. The first half is where a server settles (VaporTodo grew about 3 MiB by
     50,000 requests and then 0.3 MiB; HummingbirdTodo 4 to 6 MiB, then 0.4 to 1.4 MiB); a leak grows at a steady
     rate. So the bound is on the second half: growth from 60,000 to 100,000 requests <= 40,000 * RSS_PER_REQUEST
     (72 bytes, twice the largest measured there: 35.9 bytes a request) + RSS_SLACK (0.5 MiB), about 85 bytes a
     request; every request answered with a success status, and every client through its share.

Exits 1 when a check failed or the server could not be run; the numbers are on lines starting with "    ".
"""
import argparse
import collections
import http.client
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

MIB = 1024 * 1024
# The memory bound (issue 45), on the second half of the memory round (from the RSS sample nearest its middle to the
# last): growth per request within RSS_PER_REQUEST bytes, plus RSS_SLACK once. A server that keeps memory per
# request grows at a steady rate; one that settles (allocator arenas, SQLite's page cache, caches warming) stops,
# and the first half is where it settles. Measured on the debug builds, 100,000 requests, growth per request from
# 60,000 to 100,000: VaporTodo 4.9 and 12.6 bytes, HummingbirdTodo 35.9 and 9.7 (runs of 300,000 requests: 1.0 and
# 3.8 bytes from 160,000 on); RSS_PER_REQUEST is twice the largest, 72, and RSS_SLACK half a MiB (the 40,000 requests then allow
# 3.25 MiB: about 85 bytes a request; the bound before allowed about 155 over the whole round).
RSS_PER_REQUEST, RSS_SLACK = 72, MIB // 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def say(text):
    print(f"    {text}", flush=True)


class Server:
    """One run of the server program on the database file, until it exits or is stopped."""

    count = 0
    running = []   # every server started, each stopped at exit (SIGKILL) if it still runs

    def __init__(self, command, database, key_file, data):
        Server.count += 1
        self.port = free_port()
        self.log_path = os.path.join(data, f"server-{Server.count}.log")
        env = {k: v for k, v in os.environ.items() if k not in ("CREDENTIALS_DIRECTORY", "TODO_KEY_CREDENTIAL")}
        env.update(TODO_DATABASE=database, TODO_KEY_FILE=key_file, LOG_LEVEL=os.environ.get("LOAD_LOG_LEVEL", "notice"))
        argv = [a.replace("{port}", str(self.port)) for a in command]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        Server.running.append(self.process)
        deadline = time.monotonic() + 60
        while True:
            try:
                status, _ = self.request("GET", "/todos?completed=true")
                if status == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop(signal.SIGKILL)
                raise RuntimeError(f"the server did not start: {self.log_tail()}")
            time.sleep(0.1)

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def request(self, method, path, body=None, connection=None):
        own = connection is None
        connection = connection or self.connection()
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = connection.getresponse()
            data = response.read()
            return response.status, (json.loads(data) if data else None)
        finally:
            if own:
                connection.close()

    def rss(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def stop(self, sig, timeout=60):
        """Sends sig; returns the exit status (a negative one: the signal that ended it), None if still running."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    def log_tail(self):
        with open(self.log_path, "rb") as log:
            return log.read()[-600:].decode(errors="replace")


class CreateLoad:
    """Threads creating todos until the server goes away, recording what was acknowledged and what is unknown."""

    def __init__(self, server, clients, label):
        self.server, self.label = server, label
        self.lock = threading.Lock()
        self.acked = {}        # id -> title, for every 201
        self.unknown = set()   # titles sent whose answer never came
        self.refused = collections.Counter()  # answers other than 201, by status: the error budget is zero
        self.died = []         # client threads that ended on an exception
        self.server_gone = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(n,), daemon=True) for n in range(clients)]

    def client(self, n):
        try:
            self.run_client(n)
        except BaseException as error:   # a client thread that dies is a failure, never a silent stop
            with self.lock:
                self.died.append(f"client {n}: {type(error).__name__}: {error}")

    def run_client(self, n):
        connection, sequence = None, 0
        while not self.server_gone.is_set():
            title = f"{self.label}-{n}-{sequence}-{uuid.uuid4().hex[:8]}"
            sequence += 1
            if connection is None:
                connection = self.server.connection()
                try:
                    connection.connect()
                except OSError:      # refused: nothing sent
                    connection = None
                    time.sleep(0.01)
                    continue
            try:
                status, body = self.server.request("POST", "/todos", {"title": title}, connection)
            except (OSError, http.client.HTTPException, ValueError):
                with self.lock:
                    self.unknown.add(title)
                connection.close()
                connection = None
                continue
            with self.lock:
                if status == 201 and body.get("title") == title:
                    self.acked[body["id"]] = title
                else:
                    self.refused[status if status != 201 else "201 with another title"] += 1
        if connection is not None:
            connection.close()

    def start(self):
        for thread in self.threads:
            thread.start()

    def join(self):
        self.server_gone.set()
        for thread in self.threads:
            thread.join(60)
        self.died += [f"{thread.name}: still running 60 s after the load ended" for thread in self.threads
                      if thread.is_alive()]


def lost_write_round(make_server, server, signal_name, load_seconds, clients, expected, check):
    """Loads server with creates, stops it with the signal, restarts; returns the restarted server and the todos
    acknowledged so far (expected, round after round)."""
    load = CreateLoad(server, clients, f"{signal_name.lower()}-load")
    started = time.monotonic()
    load.start()
    time.sleep(load_seconds)
    with load.lock:
        acked_at_signal = len(load.acked)
    status = server.stop(getattr(signal, signal_name))
    stopped = time.monotonic() - started - load_seconds
    load.join()
    expected.update(load.acked)

    server = make_server()
    _, todos = server.request("GET", "/todos")
    listed = {todo["id"]: todo["title"] for todo in todos}
    titles = set(listed.values())
    round_lost = [i for i, title in load.acked.items() if listed.get(i) != title]
    all_lost = [i for i, title in expected.items() if listed.get(i) != title]
    committed_unknown = len(load.unknown & titles)
    status_text = {None: "still running after 60 s (killed)"}.get(status, str(status))
    say(f"{signal_name} after {load_seconds:g} s of {clients} clients creating: {len(load.acked)} acknowledged "
        f"({acked_at_signal} when the signal was sent: {acked_at_signal / load_seconds:.0f}/s), "
        f"{len(load.unknown)} sent with no answer, {sum(load.refused.values())} answered otherwise "
        f"{dict(load.refused) or ''}; exit status {status_text} {stopped:.1f} s after the signal")
    say(f"restarted on the same file: {len(todos)} todos listed; of this round's acknowledged "
        f"{len(load.acked) - len(round_lost)} found, {len(round_lost)} lost; of every round's {len(expected)} "
        f"acknowledged, {len(all_lost)} lost; unacknowledged but committed: {committed_unknown} of "
        f"{len(load.unknown)}")
    for i in all_lost[:5]:
        say(f"lost: {i} {expected[i]}")
    check(f"{signal_name} mid-load: every acknowledged create found after a restart ({len(expected) - len(all_lost)} "
          f"of {len(expected)} found, {len(all_lost)} lost; {committed_unknown} unacknowledged but committed)",
          len(load.acked) > 0 and not all_lost)
    answered_otherwise = sum(load.refused.values())
    for death in load.died[:5]:
        say(f"died: {death}")
    check(f"{signal_name} mid-load: every create answered 201 or not at all, and every client thread ran to its end "
          f"({answered_otherwise} answered otherwise {dict(load.refused) or ''}; {len(load.died)} of {clients} "
          f"client threads died; the error budget is zero)", answered_otherwise == 0 and not load.died)
    for i in all_lost:     # reported once: the next round counts its own losses (and those of what this one found)
        del expected[i]
    if signal_name == "SIGTERM":
        check(f"SIGTERM mid-load: the server exits with status 0 (exit status {status_text})", status == 0)
    return server


def memory_round(server, clients, first, total, check, step=10_000):
    """The mix on server; RSS after `first` requests, then after every `step` more up to `total`. The verdict: the
    growth over the second half (from the sample nearest the middle to `total`), per request, within
    RSS_PER_REQUEST (plus RSS_SLACK once); every request answered with a success status, and every client thread
    through its share."""
    errors, done, lock = [], [0], threading.Lock()

    def client(n, count, mine):
        connection = server.connection()
        finished = 0
        try:
            for i in range(count):
                kind = i % 20
                if len(mine) < 8 or kind in (0, 1):
                    method, path, body = "POST", "/todos", {"title": f"memory-{n}-{i}"}
                elif kind in (3, 4):
                    method, path, body = "DELETE", f"/todos/{mine.pop(0)}", None
                elif kind == 6:
                    method, path, body = "PATCH", f"/todos/{mine[i % len(mine)]}", {"completed": i % 2 == 0,
                                                                                   "title": f"memory-{n}-{i}-u"}
                elif kind == 8:
                    method, path, body = "GET", "/todos", None
                else:
                    method, path, body = "GET", f"/todos/{mine[i % len(mine)]}", None
                status, answer = server.request(method, path, body, connection)
                if status == 201:
                    mine.append(answer["id"])
                elif status not in (200, 204):
                    with lock:
                        errors.append(f"{method} {path}: {status}")
                finished += 1
        except BaseException as error:   # any exception ends the client: counted, never a silent stop
            with lock:
                errors.append(f"client {n} died: {type(error).__name__}: {error}")
        finally:
            connection.close()
            with lock:
                done[0] += finished

    owned = [[] for _ in range(clients)]

    def phase(requests):
        threads = [threading.Thread(target=client, args=(n, requests // clients + (n < requests % clients), owned[n]))
                   for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        time.sleep(0.5)
        return server.rss()

    started = time.monotonic()
    samples = [(first, phase(first))]
    middle = time.monotonic()
    while samples[-1][0] < total:
        requests = min(step, total - samples[-1][0])
        samples.append((samples[-1][0] + requests, phase(requests)))
    elapsed = time.monotonic() - started
    rss_first, rss_total = samples[0][1], samples[-1][1]
    middle_count, rss_middle = samples[len(samples) // 2]
    growth, measured = rss_total - rss_middle, total - middle_count
    bound = measured * RSS_PER_REQUEST + RSS_SLACK
    say(f"{total} requests of {clients} clients (creates, deletes, updates, reads, lists of ~{sum(map(len, owned))} "
        f"todos) in {elapsed:.1f} s ({(total - first) / max(elapsed - (middle - started), 1e-9):.0f}/s after the "
        f"first {first}); {done[0]} answered, {len(errors)} failed")
    for error in errors[:5]:
        say(f"failed: {error}")
    say("VmRSS after " + ", ".join(f"{count}: {rss / MIB:.2f}" for count, rss in samples) + " MiB")
    say(f"growth from {first} to {total}: {(rss_total - rss_first) / MIB:+.2f} MiB, "
        f"{(rss_total - rss_first) / (total - first):+.1f} bytes a request (settling included); "
        f"from {middle_count} to {total}: {growth / MIB:+.2f} MiB, {growth / measured:+.1f} bytes a request")
    check(f"memory: VmRSS grew {growth / MIB:+.2f} MiB from {middle_count:,} to {total:,} requests "
          f"({growth / measured:+.1f} bytes a request) <= {measured:,} * {RSS_PER_REQUEST} B + "
          f"{RSS_SLACK / MIB:g} MiB = {bound / MIB:.2f} MiB; every request answered ({done[0]} of {total}, "
          f"{len(errors)} failed)", growth <= bound and not errors and done[0] == total)


# ------------------------------------------------------------------------------------------ the controls ---

class StubHandler(http.server.BaseHTTPRequestHandler):
    """The todo API in a few lines (the state in memory, every change appended to TODO_DATABASE before the answer,
    replayed at start), with a planted fault by MODE: "good" none; "error500" every 10th create answered 500;
    "badbody" every 10th create answered 201 with a body that is no todo (a client that trusts it dies); "leak"
    8 KiB kept for every request."""
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True   # the headers and the body are two writes: no delayed-ACK stall between them
    mode, todos, lock, log, kept, creates = "good", {}, threading.Lock(), None, [], [0]

    def log_message(self, *arguments):
        pass

    def answer(self, status, value=None):
        data = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else {}

    def record(self, change):
        StubHandler.log.write(json.dumps(change) + "\n")
        StubHandler.log.flush()

    def handle_one(self, method):
        if StubHandler.mode == "leak":
            StubHandler.kept.append(bytearray(1024))
        parts = self.path.split("?")[0].strip("/").split("/")
        with StubHandler.lock:
            if parts == ["todos"] and method == "GET":
                return self.answer(200, list(StubHandler.todos.values()))
            if parts == ["todos"] and method == "POST":
                StubHandler.creates[0] += 1
                todo = {"id": str(uuid.uuid4()), "title": self.body()["title"], "completed": False}
                if StubHandler.mode == "error500" and StubHandler.creates[0] % 10 == 0:
                    return self.answer(500, {"error": True, "reason": "planted"})
                StubHandler.todos[todo["id"]] = todo
                self.record(todo)
                if StubHandler.mode == "badbody" and StubHandler.creates[0] % 10 == 0:
                    return self.answer(201, [todo])
                return self.answer(201, todo)
            if len(parts) == 2 and parts[1] in StubHandler.todos:
                todo = StubHandler.todos[parts[1]]
                if method == "GET":
                    return self.answer(200, todo)
                if method == "PATCH":
                    todo.update(self.body())
                    self.record(todo)
                    return self.answer(200, todo)
                if method == "DELETE":
                    del StubHandler.todos[parts[1]]
                    self.record({"id": parts[1], "deleted": True})
                    return self.answer(204)
            return self.answer(404, {"error": True})

    def do_GET(self):
        self.handle_one("GET")

    def do_POST(self):
        self.handle_one("POST")

    def do_PATCH(self):
        self.handle_one("PATCH")

    def do_DELETE(self):
        self.handle_one("DELETE")


def stub_server(mode, port):
    """Serves the stub API on 127.0.0.1:port until SIGTERM (exit 0) or SIGKILL."""
    path = os.environ["TODO_DATABASE"]
    if os.path.exists(path):
        with open(path) as log:
            for line in log:
                change = json.loads(line)
                if change.get("deleted"):
                    StubHandler.todos.pop(change["id"], None)
                else:
                    StubHandler.todos[change["id"]] = change
    StubHandler.mode, StubHandler.log = mode, open(path, "a")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), StubHandler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever()


def self_test(data, key_file):
    """The checker's own controls, on the stub server in this run: with no fault every check passes; a server
    answering 500 to some creates, one whose answers kill the clients that read them, and one that keeps memory
    per request each fail the check that is there for it (issue 45). Returns the ok:/FAIL: lines."""
    results = []
    cases = [
        ("good", "SIGTERM,SIGKILL,memory", None),
        ("error500", "SIGTERM", "every create answered 201 or not at all"),
        ("badbody", "SIGKILL", "every create answered 201 or not at all"),
        ("leak", "memory", "memory: "),
    ]
    for mode, rounds, must_fail in cases:
        folder = os.path.join(data, f"control-{mode}")
        os.makedirs(folder, exist_ok=True)
        verdicts = []
        command = [sys.executable, os.path.abspath(__file__), "--stub-server", mode, "{port}"]
        try:
            run_rounds(command, folder, key_file, rounds.split(","), clients=4, load=1.0, first=1_000,
                       total=6_000, step=1_000, check=lambda name, passed: verdicts.append((name, passed)))
        except (RuntimeError, OSError, http.client.HTTPException, ValueError) as error:
            verdicts.append((f"the rounds ran to their end ({type(error).__name__}: {error})", False))
        failed = [name for name, passed in verdicts if not passed]
        if must_fail is None:
            right = verdicts and not failed
            expectation = f"every check passes ({len(verdicts)})"
        else:
            right = any(must_fail in name for name in failed) and all(must_fail in name for name in failed)
            expectation = f"the check '{must_fail}…' fails, and only it"
        line = f"control: a stub server ({mode}, rounds {rounds}): {expectation}"
        results.append(f"ok: {line}" if right else f"FAIL: {line}; failed: {failed or 'none'}")
    return results


def run_rounds(command, data, key_file, rounds, clients, load, first, total, step, check):
    """The rounds named in `rounds` against the server `command`, its files in `data`; raises on a server that
    cannot be run."""
    database = os.path.join(data, "load.db")
    make = lambda path=database: Server(command, path, key_file, data)  # noqa: E731
    server = None
    try:
        expected = {}
        for signal_name in (r for r in rounds if r.startswith("SIG")):
            server = server or make()
            server = lost_write_round(make, server, signal_name, load, clients, expected, check)
        if server is not None:
            server.stop(signal.SIGTERM)
            server = None
        if "memory" in rounds:
            server = make(os.path.join(data, "memory.db"))
            memory_round(server, clients, first, total, check, step)
    finally:
        if server is not None:
            server.stop(signal.SIGTERM)
        for process in Server.running:
            if process.poll() is None:
                process.kill()
                process.wait()


def main():
    if sys.argv[1:2] == ["--stub-server"]:
        return stub_server(sys.argv[2], int(sys.argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a folder for the database files and the server's output")
    parser.add_argument("--key-file", required=True, help="the key file (mode 0600)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--load", type=float, default=3.0, help="seconds of load before each signal")
    parser.add_argument("--requests", type=int, default=100_000, help="the memory round's requests")
    parser.add_argument("--first", type=int, default=10_000, help="requests before the memory round's first RSS")
    parser.add_argument("--rounds", default="SIGTERM,SIGKILL,memory")
    parser.add_argument("--controls-only", action="store_true", help="run the controls on the stub server only")
    parser.add_argument("command", nargs="*", help="the server program and its arguments")
    options = parser.parse_args()
    failures = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("load-safety.py: stopped by SIGTERM"))

    def check(name, passed):
        print(f"{'ok' if passed else 'FAIL'}: {name}", flush=True)
        if not passed:
            failures.append(name)

    # The controls first, in every run: the checks must fail on a server with a planted fault.
    for line in self_test(options.data, options.key_file):
        print(line, flush=True)
        if line.startswith("FAIL"):
            failures.append(line)
    if options.controls_only:
        return 1 if failures else 0
    if not options.command:
        parser.error("the server program is missing")
    try:
        run_rounds(options.command, options.data, options.key_file, options.rounds.split(","), options.clients,
                   options.load, options.first, options.requests, 10_000, check)
    except (RuntimeError, OSError, http.client.HTTPException, ValueError) as error:
        print(f"FAIL: load-safety.py ran to its end ({type(error).__name__}: {error})", flush=True)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
