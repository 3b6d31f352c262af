#!/usr/bin/env python3
"""A minimal client for `kernrl serve`, on Python's standard library alone.

Two ways in:

* `KernrlEnv`: an OpenEnv episode over a WebSocket (/ws): reset(problem_id) gives the task,
  step(code) grades an answer and gives observation, reward, done; state(); close().
* `KernrlHTTP`: kernrl's own API (/v1): grade one answer and get its trace record, grade a batch
  and get the records as they finish, list problems, fetch a prompt.

    from kernrl_client import KernrlEnv
    with KernrlEnv("http://127.0.0.1:8000") as env:
        first = env.reset(problem_id="L1_23_Softmax")
        print(first["observation"]["problem_description"])
        result = env.step(open("answer.md").read())
        print(result["reward"], result["observation"]["feedback"])

Run it as a script to grade a file:  kernrl_client.py answer.md --problem L1_23_Softmax
"""
import base64
import hashlib
import http.client
import json
import os
import socket
import struct
import urllib.parse

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class ServerError(RuntimeError):
    """An error message from the server: `code` is OpenEnv's (CAPACITY_REACHED, ...)."""

    def __init__(self, data):
        self.data = data
        self.code = data.get("code", "UNKNOWN")
        super().__init__(f"{data.get('message', 'error')} (code: {self.code})")


class WebSocket:
    """Just enough of RFC 6455 for a client: text messages, ping/pong, close."""

    def __init__(self, url, headers=None, timeout=120.0):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("ws", "http"):
            raise ValueError("only ws:// and http:// URLs (no TLS in this minimal client)")
        host, port = u.hostname, u.port or 80
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {u.path or '/'} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the server closed the connection during the handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n")[0].decode()
        if " 101 " not in status + " ":
            raise ConnectionError(f"WebSocket handshake refused: {status}")
        accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
        if accept.encode() not in head:
            raise ConnectionError("bad Sec-WebSocket-Accept from the server")
        self.close_code = None

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else \
            (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big")
        self.sock.sendall(head + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def recv(self):
        """The next text message; raises ConnectionError (with close_code set) on close."""
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
            elif opcode == 0x8:  # close
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                try:
                    self._send_frame(0x8, payload[:2])
                except OSError:
                    pass
                self.sock.close()
                raise ConnectionError(f"connection closed by the server (code {self.close_code})")
            elif opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode()

    def close(self):
        try:
            self._send_frame(0x8, struct.pack("!H", 1000))
            while True:
                self.recv()
        except (ConnectionError, OSError):
            pass
        finally:
            self.sock.close()


class KernrlEnv:
    """One OpenEnv episode of the kernrl environment, over `kernrl serve`'s /ws."""

    def __init__(self, base_url="http://127.0.0.1:8000", token=None, timeout=120.0):
        u = urllib.parse.urlsplit(base_url)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.ws = WebSocket(f"ws://{u.netloc}/ws", headers, timeout)

    def _call(self, message):
        self.ws.send(json.dumps(message))
        reply = json.loads(self.ws.recv())
        if reply.get("type") == "error":
            raise ServerError(reply.get("data", {}))
        return reply.get("data", {})

    def reset(self, problem_id=None, seed=None, episode_id=None):
        """Starts an episode: {"observation": {...}, "reward": 0.0, "done": false}."""
        data = {k: v for k, v in (("problem_id", problem_id), ("seed", seed),
                                  ("episode_id", episode_id)) if v is not None}
        return self._call({"type": "reset", "data": data})

    def step(self, code):
        """Grades one answer: {"observation": {...feedback, speedup...}, "reward": r, "done": d}."""
        return self._call({"type": "step", "data": {"code": code}})

    def state(self):
        return self._call({"type": "state"})

    def close(self):
        try:
            self.ws.send(json.dumps({"type": "close"}))
        except OSError:
            pass
        self.ws.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class KernrlHTTP:
    """kernrl's own API (/v1): records of the trace format, problems, prompts."""

    def __init__(self, base_url="http://127.0.0.1:8000", token=None, timeout=600.0):
        u = urllib.parse.urlsplit(base_url)
        self.host, self.port = u.hostname, u.port or 80
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.timeout = timeout

    def _request(self, method, path, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers=self.headers)
        return conn, conn.getresponse()

    def _json(self, method, path, body=None):
        conn, r = self._request(method, path, body)
        text = r.read().decode()
        conn.close()
        data = json.loads(text) if text.startswith(("{", "[")) else text
        if r.status != 200:
            raise ServerError(data.get("error", {"message": text}) if isinstance(data, dict)
                              else {"message": text})
        return data

    def grade(self, source, problem=None, label=None, seed=None, sample=None, timeout_s=None):
        """Grades one answer; returns its trace record (kernrl.trace.v1)."""
        req = {"source": source}
        for k, v in (("problem", problem), ("label", label), ("seed", seed), ("sample", sample),
                     ("timeout_s", timeout_s)):
            if v is not None:
                req[k] = v
        return self._json("POST", "/v1/grade", req)

    def grade_batch(self, items):
        """Grades many answers ({"source", "problem"?, ...} each); yields (index, record or None,
        error or None) as each finishes."""
        conn, r = self._request("POST", "/v1/grade-batch", {"items": list(items)})
        if r.status != 200:
            text = r.read().decode()
            conn.close()
            raise ServerError(json.loads(text).get("error", {"message": text}))
        for line in r:
            if not line.strip():
                continue
            msg = json.loads(line)
            if msg.get("done"):
                break
            yield msg["index"], msg.get("record"), msg.get("error")
        conn.close()

    def problems(self, level=None):
        return self._json("GET", "/v1/problems" + (f"?level={level}" if level else ""))["problems"]

    def prompt(self, problem_id):
        conn, r = self._request("GET", f"/v1/problems/{urllib.parse.quote(problem_id)}/prompt")
        text = r.read().decode()
        conn.close()
        if r.status != 200:
            raise ServerError(json.loads(text).get("error", {"message": text}))
        return text

    def info(self):
        return self._json("GET", "/v1")


def main():
    import argparse

    ap = argparse.ArgumentParser(description="Grade an answer file through kernrl serve.")
    ap.add_argument("file")
    ap.add_argument("--problem", help="problem id (default: the launch block's)")
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--episode", action="store_true",
                    help="grade it as one step of an OpenEnv episode (WebSocket) instead")
    a = ap.parse_args()
    token = os.environ.get("KERNRL_SERVE_TOKEN")
    source = open(a.file, encoding="utf-8", errors="replace").read()
    if a.episode:
        with KernrlEnv(a.url, token) as env:
            env.reset(problem_id=a.problem)
            result = env.step(source)
            print(json.dumps({"reward": result["reward"], "done": result["done"],
                              "status": result["observation"].get("status")}))
            print(result["observation"]["feedback"])
    else:
        record = KernrlHTTP(a.url, token).grade(source, problem=a.problem,
                                                label=os.path.basename(a.file))
        print(json.dumps({"status": record["status"], "reward": record["reward"],
                          "speedup": record.get("speedup")}))
        print(record["feedback"])


if __name__ == "__main__":
    main()
