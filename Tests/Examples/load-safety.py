#!/usr/bin/env python3
"""Nothing lost under load, and no memory kept per request: a todo app's server (Examples/VaporTodo) driven over
HTTP as a service is, from the Python standard library only.

    load-safety.py --data DIR --key-file FILE -- PROGRAM ARGUMENT…     ("{port}" in an argument: the port)

The server runs with TODO_DATABASE in DIR and its key from TODO_KEY_FILE (never in an argument or a variable's
value), its output in DIR/server-N.log. Three rounds, each printing its numbers and an "ok: NAME" or "FAIL: NAME"
line per check (the calling script counts those):

  1. SIGTERM mid-load: CLIENTS threads, each on a keep-alive connection, create todos (POST /todos, a title unique
     to the request) as fast as the server answers. Every 201 is recorded with its id (acknowledged); every request
     sent whose answer never came (the connection reset or closed under it) is recorded by its title (outcome
     unknown); a request refused before it was sent is neither. After LOAD seconds the server gets SIGTERM, as
     systemd stops a service; it must exit with status 0. Restarted on the same file, GET /todos must list every
     acknowledged todo under its id and title (lost: those it does not); the unknown ones it lists are counted
     too (unacknowledged but committed: what the server did for a client that never heard back).
  2. SIGKILL mid-load: the same on the restarted server, stopped with SIGKILL (no shutdown at all), restarted and
     checked the same way (round 1's todos too). A commit's WAL frames are written before the 201 is sent, and the
     kernel keeps them when the process dies: a SIGKILL costs only the requests in flight, whose clients never hear
     back (some of them committed). What synchronous=EXTRA (the app's default) adds, an fsync before each
     acknowledgement, is for a power cut or a kernel crash (Tests/Support/PowerLossVFS), not for a kill.
  3. Memory: a fresh file, CLIENTS threads doing a mix (per 20 requests: 2 creates, 2 deletes, an update, a list of
     the table, 14 reads; the table stays near CLIENTS * 8 rows, so a list costs the same at the end as at the
     start); the server's resident memory (VmRSS) after 10,000 requests and after 100,000, every client idle at
     both points. The bound: RSS(100k) <= RSS(10k) * 1.10 + 8 MiB, and every request answered with a success
     status. Measured on the debug build: about 57 MiB after 10,000, 2-3 MiB more after 100,000 (under 40 bytes a
     request: allocator and SQLite page-cache settling); the bound lets through about 14 MiB, some 160 bytes a
     request over the last 90,000; keeping each request's body and headers (about 1 KiB a request) fails it.

Exits 1 when a check failed or the server could not be run; the numbers are on lines starting with "    ".
"""
import argparse
import collections
import http.client
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
RSS_FACTOR, RSS_SLACK = 1.10, 8 * MIB


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
        self.refused = collections.Counter()  # answers other than 201, by status (none expected before the signal)
        self.server_gone = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(n,), daemon=True) for n in range(clients)]

    def client(self, n):
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
                    self.refused[status] += 1
        if connection is not None:
            connection.close()

    def start(self):
        for thread in self.threads:
            thread.start()

    def join(self):
        self.server_gone.set()
        for thread in self.threads:
            thread.join(60)


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
    for i in all_lost:     # reported once: the next round counts its own losses (and those of what this one found)
        del expected[i]
    if signal_name == "SIGTERM":
        check(f"SIGTERM mid-load: the server exits with status 0 (exit status {status_text})", status == 0)
    return server


def memory_round(server, clients, first, total, check):
    """The mix on server; RSS after `first` and after `total` requests."""
    errors, lock = [], threading.Lock()

    def client(n, count, mine):
        connection = server.connection()
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
        except (OSError, http.client.HTTPException, ValueError) as error:
            with lock:
                errors.append(f"{type(error).__name__}: {error}")
        finally:
            connection.close()

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
    rss_first = phase(first)
    middle = time.monotonic()
    rss_total = phase(total - first)
    elapsed = time.monotonic() - started
    bound = rss_first * RSS_FACTOR + RSS_SLACK
    say(f"{total} requests of {clients} clients (creates, deletes, updates, reads, lists of ~{sum(map(len, owned))} "
        f"todos) in {elapsed:.1f} s ({(total - first) / (elapsed - (middle - started)):.0f}/s after the first "
        f"{first}); {len(errors)} failed")
    for error in errors[:5]:
        say(f"failed: {error}")
    say(f"VmRSS after {first}: {rss_first / MIB:.1f} MiB; after {total}: {rss_total / MIB:.1f} MiB "
        f"({(rss_total - rss_first) / (total - first):+.0f} bytes a request)")
    check(f"memory: VmRSS after {total:,} requests {rss_total / MIB:.1f} MiB <= VmRSS after {first:,} "
          f"({rss_first / MIB:.1f} MiB) * {RSS_FACTOR:.2f} + {RSS_SLACK // MIB} MiB = {bound / MIB:.1f} MiB, "
          f"every request answered ({len(errors)} failed)", rss_total <= bound and not errors)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a folder for the database files and the server's output")
    parser.add_argument("--key-file", required=True, help="the key file (mode 0600)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--load", type=float, default=3.0, help="seconds of load before each signal")
    parser.add_argument("--requests", type=int, default=100_000, help="the memory round's requests")
    parser.add_argument("--first", type=int, default=10_000, help="requests before the memory round's first RSS")
    parser.add_argument("--rounds", default="SIGTERM,SIGKILL,memory")
    parser.add_argument("command", nargs="+", help="the server program and its arguments")
    options = parser.parse_args()
    failures = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("load-safety.py: stopped by SIGTERM"))

    def check(name, passed):
        print(f"{'ok' if passed else 'FAIL'}: {name}", flush=True)
        if not passed:
            failures.append(name)

    rounds = options.rounds.split(",")
    database = os.path.join(options.data, "load.db")
    make = lambda path=database: Server(options.command, path, options.key_file, options.data)  # noqa: E731
    server = None
    try:
        expected = {}
        for signal_name in (r for r in rounds if r.startswith("SIG")):
            server = server or make()
            server = lost_write_round(make, server, signal_name, options.load, options.clients, expected, check)
        if server is not None:
            server.stop(signal.SIGTERM)
            server = None
        if "memory" in rounds:
            server = make(os.path.join(options.data, "memory.db"))
            memory_round(server, options.clients, options.first, options.requests, check)
    except (RuntimeError, OSError, http.client.HTTPException, ValueError) as error:
        print(f"FAIL: load-safety.py ran to its end ({type(error).__name__}: {error})", flush=True)
        return 1
    finally:
        if server is not None:
            server.stop(signal.SIGTERM)
        for process in Server.running:
            if process.poll() is None:
                process.kill()
                process.wait()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
