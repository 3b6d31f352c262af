"""kernrl's Triton compile server: the helper (kernrl_triton.py, beside this file) imported once,
with Triton imported and warmed up by one compile of a kernel of its own, then a fresh process
forked for every compile. It runs only inside kernrl-triton's OS sandbox (src/triton), started as

    kernrl_triton_server.py --profile JSON [--arch N] [--jobs J]

(JSON: the sandbox's {read_dirs, read_files, exec_files}; N: the architecture of the warm-up
compile; J: how many of one request's Triton compiles run at once, in processes forked by the
compile's own process after its confinement). Protocol (docs/protocol.md, "kernrl-triton"): it prints the helper's ready line, then for
every request line on stdin it prints the compile's answer line (the helper's) and a trailer line
{"done": true, "answered", "status", "log"}; a compile that died without an answer gets the trailer
alone.

Each compile's process is forked before any of the kernel file's code runs and, before that code
runs, confines itself further (a Landlock layer of its own): it can write only a fresh directory of
its own (Triton's cache and temporary files), read only the Python installation and the triton
package, execute only Python and ptxas, and signal no process outside itself. Nothing one compile
leaves behind can reach another: not its files, not the server's standard input (the next
requests) or output (the next answers), which it closes.
"""
import ctypes
import importlib.util
import json
import os
import pickle
import shutil
import signal
import struct
import sys
import tempfile
import time

# Landlock (linux/landlock.h): the system calls and access rights.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 16, 32, 64, 128, 256
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 512, 1024, 2048, 4096
REFER, TRUNCATE, IOCTL_DEV = 8192, 16384, 32768
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2

WARM_UP_SOURCE = '''import triton
import triton.language as tl


@triton.jit
def kernrl_warm_up(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=mask)) + 1.0, mask=mask)
'''


def load_helper():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernrl_triton.py")
    spec = importlib.util.spec_from_file_location("kernrl_triton", path)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    return helper


def confine(profile, job):
    """A Landlock layer of this process's own: `job` writable, the profile readable, nothing else.
    Raises OSError when it cannot be applied (the compile must then not run)."""
    libc = ctypes.CDLL(None, use_errno=True)
    call = libc.syscall
    call.restype = ctypes.c_long
    L = ctypes.c_long

    def check(rc, what):
        if rc < 0:
            e = ctypes.get_errno()
            raise OSError(e, "%s: %s" % (what, os.strerror(e)))
        return rc

    abi = check(call(L(SYS_CREATE_RULESET), ctypes.c_void_p(None), L(0), L(1)), "landlock abi")
    handled = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | REMOVE_DIR | REMOVE_FILE | \
        MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
    file_rights = EXECUTE | WRITE_FILE | READ_FILE
    if abi >= 2:
        handled |= REFER
    if abi >= 3:
        handled |= TRUNCATE
        file_rights |= TRUNCATE
    if abi >= 5:
        handled |= IOCTL_DEV
    scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if abi >= 6 else 0
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    attr = ctypes.create_string_buffer(struct.pack("<QQQ", handled, 0, scoped)[:size], size)
    ruleset = check(call(L(SYS_CREATE_RULESET), attr, L(size), L(0)), "landlock_create_ruleset")
    write_dir = handled & ~(EXECUTE | MAKE_CHAR | MAKE_BLOCK | MAKE_SOCK | MAKE_FIFO | IOCTL_DEV)
    rules = [(d, READ_FILE | READ_DIR) for d in profile.get("read_dirs", [])]
    rules += [(f, READ_FILE) for f in profile.get("read_files", [])]
    rules += [(f, READ_FILE | EXECUTE) for f in profile.get("exec_files", [])]
    rules += [(job, write_dir), ("/dev/null", (READ_FILE | WRITE_FILE | TRUNCATE) & file_rights)]
    try:
        for path, access in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = ctypes.create_string_buffer(struct.pack("<Qi", access, fd), 12)
                check(call(L(SYS_ADD_RULE), L(ruleset), L(1), rule, L(0)),
                      "landlock_add_rule " + path)
            finally:
                os.close(fd)
        check(call(L(SYS_RESTRICT_SELF), L(ruleset), L(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def compile_in_child(helper, profile, job, answer_w, server_fds, line, jobs):
    """In the forked process: confine, compile, write the answer to `answer_w`, exit."""
    for fd in server_fds:
        os.close(fd)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    log = os.open(os.path.join(job, "stderr.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 2)
    os.dup2(log, 1)  # the kernel file's prints go to the log, never to an answer
    os.close(log)
    os.close(null)
    helper.ANSWER = os.fdopen(answer_w, "w")
    for k in ("HOME", "TMPDIR", "TRITON_HOME"):
        os.environ[k] = job
    os.environ["TRITON_CACHE_DIR"] = os.path.join(job, "cache")
    tempfile.tempdir = job
    knobs = getattr(sys.modules.get("triton"), "knobs", None)
    try:  # Triton 3.4+ reads these through its knobs, which may hold the server's values
        knobs.cache.home_dir = job
        knobs.cache.dir = os.path.join(job, "cache")
    except AttributeError:
        pass
    os.chdir(job)
    try:
        confine(profile, job)
    except OSError as e:
        helper.out({"ok": False, "sandbox_error": "a compile could not confine itself: %s" % e})
        os._exit(0)
    helper.COMPILED.clear()
    helper.TIMING.update(compile_ms=0.0, compiles=0)
    helper.out(parallel_answer(helper, line.decode("utf-8", "replace"), jobs))
    os._exit(0)


class Compiled:
    """What compile_one reads of a compiled kernel: its metadata and assembly."""

    def __init__(self, metadata, asm):
        self.metadata = metadata
        self.asm = asm


def compile_unit(helper, real, src, target, options):
    """One Triton compile in a worker: the result, or the error as it would have been raised."""
    t0 = time.monotonic()
    try:
        k = real(src, target=target, options=options)
        return {"metadata": helper.json_metadata(k),
                "asm": {"ptx": k.asm.get("ptx", ""), "cubin": k.asm["cubin"]},
                "ms": (time.monotonic() - t0) * 1000}
    except Exception as e:
        return {"error": str(e), "type": type(e).__name__, "lineno": getattr(e, "lineno", None),
                "ms": (time.monotonic() - t0) * 1000}


def compile_parallel(helper, real, units, jobs):
    """Compiles `units` ([(key, src, target, options)]) in `jobs` forked workers (of this confined
    process: they share only its own directory); returns key -> compile_unit's result."""
    workers = []
    for w in range(jobs):
        mine = units[w::jobs]
        r, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                out = {key: compile_unit(helper, real, src, target, opts)
                       for key, src, target, opts in mine}
                with os.fdopen(wfd, "wb") as f:
                    pickle.dump(out, f)
            finally:
                os._exit(0)
        os.close(wfd)
        workers.append((pid, r, mine))
    results = {}
    for pid, r, mine in workers:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        try:
            results.update(pickle.loads(data))
        except Exception:
            for key, *_ in mine:
                results[key] = {"error": "the compile process died (%s)" %
                                os.waitstatus_to_exitcode(status), "type": "RuntimeError",
                                "lineno": None, "ms": 0.0}
    return results


def parallel_answer(helper, line, jobs):
    """The helper's answer to `line`, its Triton compiles run in parallel: a first pass records
    every compile the request makes (nothing is compiled), the distinct ones are compiled in `jobs`
    workers, and a second pass builds the answer from their results (a compile the first pass did
    not see is made there and then). The same answer as helper.answer(line), sooner."""
    try:
        if json.loads(line).get("mode") == "wrapper_plan":  # no compile: the wrapper runs once
            return helper.answer(line)
    except ValueError:
        pass  # the helper's answer says what is wrong with the line
    real_compile, real_source = helper.COMPILER["compile"], helper.COMPILER["ASTSource"]
    calls = {}

    def keyed_source(fn, signature, constexprs=None, attrs=None):
        src = real_source(fn, signature, constexprs=constexprs, attrs=attrs)
        src.kernrl_key = repr((fn.__name__, sorted(signature.items()),
                               sorted((constexprs or {}).items()),
                               sorted((attrs or {}).items(), key=repr)))
        return src

    def key_of(src, target, options):
        return repr((src.kernrl_key, repr(target), sorted((options or {}).items())))

    def record(src, target=None, options=None):
        calls.setdefault(key_of(src, target, options), (src, target, options))
        return Compiled({}, {"ptx": "", "cubin": b""})

    def reset():
        helper.COMPILED.clear()
        helper.TIMING.update(compile_ms=0.0, compiles=0)

    helper.COMPILER.update(compile=record, ASTSource=keyed_source)
    try:
        first = helper.answer(line)
    finally:
        helper.COMPILER.update(compile=real_compile, ASTSource=real_source)
    reset()
    jobs = min(jobs, len(calls))
    if not first.get("ok") or jobs <= 1:
        return first if not first.get("ok") else helper.answer(line)
    t0 = time.monotonic()
    results = compile_parallel(helper, real_compile, [(k,) + v for k, v in calls.items()], jobs)
    wall_ms = (time.monotonic() - t0) * 1000

    def lookup(src, target=None, options=None):
        r = results.get(key_of(src, target, options))
        if r is None:
            return real_compile(src, target=target, options=options)
        if "error" in r:
            e = type(r["type"], (Exception,), {})(r["error"])
            if r["lineno"] is not None:
                e.lineno = r["lineno"]
            raise e
        return Compiled(r["metadata"], r["asm"])

    helper.COMPILER.update(compile=lookup, ASTSource=keyed_source)
    try:
        ans = helper.answer(line)
    finally:
        helper.COMPILER.update(compile=real_compile, ASTSource=real_source)
    if "timing" in ans:
        ans["timing"].update(compile_ms=round(wall_ms, 1), compiles=len(results), parallel=jobs,
                             compile_sum_ms=round(sum(r["ms"] for r in results.values()), 1))
    return ans


def read_answer(fd):
    """The first line the compile wrote (bytes, with its newline), or what it wrote before dying."""
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        if b"\n" in chunk:
            break
    return b"".join(chunks)


def tail(path, n=8000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def serve_one(helper, profile, tmp, out_fd, line, jobs):
    job = tempfile.mkdtemp(prefix="job-", dir=tmp)
    r, w = os.pipe()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            compile_in_child(helper, profile, job, w, (0, out_fd), line, jobs)
        finally:
            os._exit(70)
    os.close(w)
    data = read_answer(r)
    os.close(r)
    try:
        os.kill(pid, signal.SIGKILL)  # done: whatever it would still do is not waited for
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    answered = data.endswith(b"\n")
    if answered:
        os.write(out_fd, data[:data.index(b"\n") + 1])
    code = os.waitstatus_to_exitcode(status)
    trailer = {"done": True, "answered": answered, "status": code,
               "log": tail(os.path.join(job, "stderr.log"))}
    shutil.rmtree(job, ignore_errors=True)
    os.write(out_fd, (json.dumps(trailer) + "\n").encode())


def warm_up(helper, arch):
    """One compile in the server itself, so that every forked compile finds Triton's backend, MLIR
    and LLVM loaded. Its own kernel, never a kernel file's."""
    req = {"source": WARM_UP_SOURCE, "filename": "kernrl-warm-up.py", "arch": arch,
           "kernels": [{"key": "w", "kernel": "kernrl_warm_up", "line": 0,
                        "args": [{"type": "*fp32", "divisible_by_16": True},
                                 {"type": "i32", "divisible_by_16": False, "value": 3}],
                        "constexprs": {"BLOCK": 128}, "options": {}}]}
    t0 = time.monotonic()
    a = helper.answer(json.dumps(req))
    helper.COMPILED.clear()
    helper.TIMING.update(compile_ms=0.0, compiles=0)
    sys.modules.pop("kernrl_kernels", None)
    return round((time.monotonic() - t0) * 1000, 1), a.get("error")


def main():
    args = sys.argv[1:]
    profile = json.loads(args[args.index("--profile") + 1]) if "--profile" in args else {}
    arch = int(args[args.index("--arch") + 1]) if "--arch" in args else 90
    jobs = int(args[args.index("--jobs") + 1]) if "--jobs" in args else 1
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    helper = load_helper()
    try:
        ready = helper.import_triton()
    except Exception as e:
        os.write(out_fd, (json.dumps({"ok": False, "error": "cannot import triton: %s: %s" %
                                      (type(e).__name__, e)}) + "\n").encode())
        return 1
    ready["warm_up_ms"], error = warm_up(helper, arch)
    if error:
        ready["warm_up_error"] = error[:500]
    ready["server"] = True
    os.write(out_fd, (json.dumps(ready) + "\n").encode())
    tmp = os.getcwd()
    # kernrl sends the next request only after this one's trailer: nothing of it is buffered here
    # when a compile is forked.
    stdin = sys.stdin.buffer
    for line in iter(stdin.readline, b""):
        if line.strip():
            serve_one(helper, profile, tmp, out_fd, line, jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
