#!/usr/bin/env python3
"""KernelBench's own eval of many generations on one GPU, with its CPU work in parallel.

KernelBench's `eval_kernel_against_ref` spends most of its time on the CPU: building each
load_inline extension (30-70 s) and drawing every trial's inputs with torch's CPU generator (its
level-1 problems draw up to 2G elements, about 10 s a draw, 7 draws a file). This module runs it
for many files at once without changing what it computes or times:

- the extensions are built first, `--jobs` at a time, with KernelBench's `build_compile_cache`
  into a build folder per file (as eval_from_generations does), the files with the largest
  inputs first;
- each file is then evaluated by `eval_kernel_against_ref` (eval_from_generations' settings) in
  a process of its own, several at a time, admitted while the GPU's and the host's memory allow
  (estimated from the problem's inputs and outputs on the meta device);
- every GPU phase of an evaluation (the correctness trials, each timing loop) holds one lock
  shared by all processes on the GPU (an flock), which is let go only while the process draws
  inputs on the CPU or copies them to the GPU. So no two processes compute on the GPU at once,
  and KernelBench's timings are taken on an otherwise idle GPU, as in a serial run. kernrl's
  grade-dir, run beside it, holds the same lock (kb_side_by_side.py).

Memory: between its GPU phases a process keeps its inputs and the two outputs on the GPU and gives
the rest of its cache back (torch.cuda.empty_cache) as it lets go of the lock; one process at a
time needs more, in its GPU phase. A process is started while the sum of what the running ones
keep, plus the largest of their phases' needs (or kernrl's, while it waits for or holds the lock),
fits the GPU, and its draw fits the host's budget.

A process that holds the lock for longer than `hold_max` seconds (180: KernelBench's own
eval_from_generations gives a whole file 180 s) is killed and recorded as hung.
"""

import contextlib
import fcntl
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROW = "KBROW "

STANDINS = {
    "dotenv": "def load_dotenv(*a, **k):\n    return False\n",
    "openai": "class OpenAI:\n    def __init__(self, *a, **k):\n        raise RuntimeError('not available')\n",
    "litellm": "def completion(*a, **k):\n    raise RuntimeError('not available')\n",
    "tqdm": "def tqdm(iterable=None, *a, **k):\n    return iterable\n",
    "requests": "",
    "pydantic": (
        "import copy\n"
        "class BaseModel:\n"
        "    def __init__(self, **kw):\n"
        "        for c in reversed(type(self).__mro__):\n"
        "            for k in getattr(c, '__annotations__', {}):\n"
        "                if hasattr(c, k):\n"
        "                    setattr(self, k, copy.deepcopy(getattr(c, k)))\n"
        "        for k, v in kw.items():\n"
        "            setattr(self, k, v)\n"
    ),
}


def kb_import(kb_root):
    """KernelBench's eval module from the checkout, with stand-ins for the modules it imports
    but its eval does not use (LLM clients, progress bars; a plain BaseModel for its result)."""
    import atexit
    import importlib.util

    shim = pathlib.Path(tempfile.mkdtemp(prefix="kb-standins-"))
    atexit.register(shutil.rmtree, shim, True)
    for mod, text in STANDINS.items():
        if importlib.util.find_spec(mod) is None:
            (shim / f"{mod}.py").write_text(text)
    sys.path.insert(0, str(pathlib.Path(kb_root) / "src"))
    sys.path.append(str(shim))
    from kernelbench import eval as kb_eval  # noqa: E402

    return kb_eval


# ---------------------------------------------------------------- child: one evaluation

class GpuLock:
    """The GPU lock of one evaluating process: held through the GPU phases, let go around the
    CPU input draws. `stamp` exists (holding the time taken) while the lock is held."""

    def __init__(self, path, stamp, on_release=None):
        self.on_release = on_release or (lambda: None)
        self.f = open(path, "a+")
        self.stamp = pathlib.Path(stamp)
        self.held = False
        self.wait_s = 0.0

    def _take(self):
        t0 = time.monotonic()
        fcntl.flock(self.f, fcntl.LOCK_EX)
        self.wait_s += time.monotonic() - t0
        self.stamp.write_text(str(time.time()))
        self.held = True

    def _give(self):
        self.on_release()
        self.held = False
        self.stamp.unlink(missing_ok=True)
        fcntl.flock(self.f, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def holding(self):
        if self.held:
            yield
            return
        self._take()
        try:
            yield
        finally:
            self._give()

    @contextlib.contextmanager
    def released(self):
        if not self.held:
            yield
            return
        self._give()
        try:
            yield
        finally:
            self._take()


def patch(kb_eval, lock):
    """Wraps KernelBench's GPU phases in the lock and its input draws and copies out of it; the
    functions themselves are KernelBench's, called with the same arguments."""
    load, process, check = kb_eval.load_original_model_and_inputs, kb_eval._process_input_tensor, \
        kb_eval.run_and_check_correctness
    timing_fn = kb_eval.timing.get_timing_function

    def load_original(src, context):
        res = load(src, context)
        if not res:
            return res
        model, init_inputs, inputs = res

        def draw(*a, **k):
            with lock.released():
                return inputs(*a, **k)
        return model, init_inputs, draw

    def process_input(*a, **k):
        with lock.released():
            return process(*a, **k)

    def correctness(*a, **k):
        with lock.holding():
            return check(*a, **k)

    def get_timing_function(*a, **k):
        fn = timing_fn(*a, **k)

        def timed(*b, **kw):
            with lock.holding():
                return fn(*b, **kw)
        return timed

    kb_eval.load_original_model_and_inputs = load_original
    kb_eval._process_input_tensor = process_input
    kb_eval.run_and_check_correctness = correctness
    kb_eval.timing.get_timing_function = get_timing_function


def child_eval(kb_root, file, ref, build_dir, lock_path, stamp):
    kb_eval = kb_import(kb_root)
    import torch

    # Letting go of the lock, the process gives its cached GPU memory back (torch.cuda.empty_cache,
    # which KernelBench's timing calls too): the next process's GPU phase may need it.
    lock = GpuLock(lock_path, stamp, lambda: torch.cuda.is_initialized() and torch.cuda.empty_cache())
    patch(kb_eval, lock)
    # KB_CUDNN_TF32=0: cuDNN's TF32 off (PyTorch's default is on, which KernelBench keeps), to tell
    # a reference convolution's TF32 error from a kernel's (recorded in the row).
    tf32 = os.environ.get("KB_CUDNN_TF32")
    if tf32 in ("0", "1"):
        torch.backends.cudnn.allow_tf32 = tf32 == "1"
    t0 = time.monotonic()
    row = {"file": file}
    if tf32 in ("0", "1"):
        row["cudnn_tf32"] = tf32 == "1"
    try:
        r = kb_eval.eval_kernel_against_ref(
            pathlib.Path(ref).read_text(), pathlib.Path(file).read_text(), seed_num=42,
            num_correct_trials=5, num_perf_trials=100, measure_performance=True,
            timing_method="cuda_event", build_dir=build_dir, device=torch.device("cuda:0"))
        if r is None:
            row.update(compiled=False, correct=False, error="lock file error (KernelBench asks for a retry)")
        else:
            md = r.metadata or {}
            err = md.get("runtime_error") or md.get("compilation_error") or md.get("correctness_issue") or ""
            row.update(compiled=bool(r.compiled), correct=bool(r.correctness),
                       runtime_ms=r.runtime if r.runtime and r.runtime > 0 else None,
                       ref_runtime_ms=r.ref_runtime if r.ref_runtime and r.ref_runtime > 0 else None,
                       excessive_speedup=bool(md.get("excessive_speedup", False)), error=str(err)[:300])
            if md.get("max_difference"):
                row["max_difference"] = md["max_difference"][:5]
    except Exception as e:  # noqa: BLE001 - KernelBench's own failure, recorded
        row.update(compiled=True, correct=False, error=f"{type(e).__name__}: {str(e)[:250]}")
    row["s"] = round(time.monotonic() - t0, 2)
    row["lock_wait_s"] = round(lock.wait_s, 2)
    print(ROW + json.dumps(row), flush=True)


def child_compile(kb_root, src, build_dir):
    kb_eval = kb_import(kb_root)
    t0 = time.monotonic()
    ok, _, err = kb_eval.build_compile_cache(pathlib.Path(src).read_text(), verbose=False, build_dir=build_dir)
    print(ROW + json.dumps({"ok": bool(ok), "error": (err or "")[:300], "s": round(time.monotonic() - t0, 1)}))


# ---------------------------------------------------------------- parent

_ESTIMATES = {}


def estimate(ref):
    """(input bytes, output bytes) of a KernelBench problem at its size, on the meta device
    (torch 2.0 and later); (None, None) where that cannot be worked out."""
    if str(ref) not in _ESTIMATES:
        _ESTIMATES[str(ref)] = _estimate(ref)
    return _ESTIMATES[str(ref)]


def _estimate(ref):
    try:
        import torch

        ns = {}
        with torch.device("meta"):
            exec(compile(pathlib.Path(ref).read_text(), str(ref), "exec"), ns)  # trusted benchmark code
            inputs = ns["get_inputs"]()
            n_in = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
            try:
                out = ns["Model"](*ns["get_init_inputs"]())(*inputs)
                outs = out if isinstance(out, (tuple, list)) else [out]
                n_out = sum(x.numel() * x.element_size() for x in outs if isinstance(x, torch.Tensor))
            except Exception:  # noqa: BLE001 - no meta kernel: as large as the inputs
                n_out = n_in
        return n_in, n_out
    except Exception:  # noqa: BLE001
        return None, None


def memory(n_in, n_out):
    """(GB on the GPU between GPU phases, GB more in them, GB on the host) of one evaluation, from
    its input and output bytes. Between phases a process holds its inputs, the reference's output
    and the kernel's (it gives back the rest of its cache when it lets go of the lock); in them,
    a new output beside the old one and the comparison's temporaries; on the host, one draw."""
    gib = 2**30
    if n_in is None:  # not known: as a large level-1 problem
        n_in = n_out = 8 * gib
    return (n_in + 2 * n_out) / gib + 1.5, max((n_in + 4 * n_out) / gib, 8.0), n_in / gib + 2.5


def gpu_gb():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "-i", "0"],
                           capture_output=True, text=True, timeout=30, check=False)
        return float(r.stdout.split()[0]) / 1024
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return 0.0


class Pool:
    """Builds and evaluates `items` (dicts: file, ref, build_dir, name); `on_row(file, row)` is
    called for every result. `reserve(gb)` / `unreserve(gb)` give another GPU user (kernrl)
    room ahead of the evaluations not yet started."""

    def __init__(self, kb_root, work, build_jobs=8, max_eval=8, gpu_total_gb=None, host_gb=80.0,
                 on_row=None, skip=None, stop_at=None, hard_at=None, hold_max=180.0, file_max=900.0):
        self.kb_root, self.work = str(kb_root), pathlib.Path(work)
        self.build_jobs, self.max_eval = build_jobs, max_eval
        total = gpu_gb() if gpu_total_gb is None else gpu_total_gb
        self.gpu_budget = max(total - 6.0, 1.0) if total else 64.0
        self.host_budget = host_gb
        self.on_row = on_row or (lambda f, r: None)
        self.skip = skip or (lambda item: None)
        self.stop_at, self.hard_at = stop_at, hard_at
        self.hold_max, self.file_max = hold_max, file_max
        self.lock_path = self.work / "gpu.lock"
        self.cv = threading.Condition()
        self.ready, self.running = [], {}
        self.res_used, self.host_used = 0.0, 0.0
        self.wanted, self.granted, self.other_peak = 0.0, False, 0.0
        self.building = 0
        self.done = False
        self.stats = {"built": 0, "build_wall_s": 0.0, "eval_wall_s": 0.0, "eval_first": None, "eval_last": None,
                      "build_s": []}
        (self.work / "kb-eval").mkdir(parents=True, exist_ok=True)

    # -- another GPU user's room
    def reserve(self, gb):
        with self.cv:
            self.wanted = gb
            if self.done:
                self.other_peak, self.granted = gb, True
            while not self.granted:
                self.cv.wait(1.0)

    def unreserve(self, gb):
        with self.cv:
            self.other_peak = 0.0
            self.wanted, self.granted = 0.0, False
            self.cv.notify_all()

    # -- builds
    def _build(self, item):
        me = str(pathlib.Path(__file__).resolve())
        env = dict(os.environ, MAX_JOBS="2")
        reason = self.skip(item)
        if reason:
            return {"ok": False, "skip": reason}
        if self.stop_at and time.monotonic() > self.stop_at:
            return {"ok": False, "not_run": "the run's time limit came first"}
        limit = 900.0 if not self.hard_at else max(1.0, min(900.0, self.hard_at - time.monotonic()))
        try:
            r = subprocess.run([sys.executable, me, "--kb-compile", self.kb_root, item["file"], item["build_dir"]],
                               capture_output=True, text=True, timeout=limit, env=env, check=False)
            lines = [ln[len(ROW):] for ln in r.stdout.splitlines() if ln.startswith(ROW)]
            return json.loads(lines[-1]) if lines else {"ok": False, "error": f"the build exited {r.returncode}"}
        except subprocess.TimeoutExpired:
            if limit < 900.0:
                return {"ok": False, "not_run": "the run's time limit came during the build"}
            return {"ok": False, "error": "the build took over 900 s"}

    def _builds(self, items):
        t0 = time.monotonic()

        def one(item):
            b = self._build(item)
            with self.cv:
                item["built"] = b
                self.building -= 1
                if b.get("s") is not None:
                    self.stats["build_s"].append(b["s"])
                self.stats["built"] += int(b.get("ok", False))
                self.ready.append(item)
                self.cv.notify_all()

        with ThreadPoolExecutor(max_workers=self.build_jobs) as pool:
            list(pool.map(one, items))
        self.stats["build_wall_s"] = round(time.monotonic() - t0, 1)

    # -- evaluations
    def _need(self, res, peak):
        """GPU memory with one more process of `res` GB between its GPU phases and `peak` GB more
        in them: every process's own, and the largest peak (one process at a time is in its GPU
        phase, or the other GPU user holding the lock)."""
        peaks = [it["peak_gb"] for it, *_ in self.running.values()] + [peak, self.other_peak]
        return self.res_used + res + max(peaks)

    def _admit(self, now):
        """Starts the ready evaluations that fit (the largest first)."""
        if self.wanted and not self.granted:
            if self._need(0.0, self.wanted) <= self.gpu_budget or not self.running:
                self.other_peak, self.granted = self.wanted, True
                self.cv.notify_all()
            return
        self.ready.sort(key=lambda it: -it["res_gb"])
        for item in list(self.ready):
            b = item.get("built", {})
            if not b.get("ok"):
                self.ready.remove(item)
                if b.get("skip") or b.get("not_run"):
                    self._row(item, {"file": item["file"], "skipped": b["skip"]} if b.get("skip") else
                              {"file": item["file"], "not_run": b["not_run"]})
                else:  # KernelBench's verdict on a file whose extension does not build
                    self._row(item, {"file": item["file"], "compiled": False, "correct": False,
                                     "error": b.get("error", "")})
                continue
            if self.stop_at and now > self.stop_at:
                self.ready.remove(item)
                self._row(item, {"file": item["file"], "not_run": "the run's time limit came first"})
                continue
            if len(self.running) >= self.max_eval:
                return
            fits = (self._need(item["res_gb"], item["peak_gb"]) <= self.gpu_budget
                    and self.host_used + item["host_gb"] <= self.host_budget)
            if not fits and self.running:
                continue
            self.ready.remove(item)
            self._start(item)

    def _start(self, item):
        me = str(pathlib.Path(__file__).resolve())
        d = self.work / "kb-eval"
        stamp = d / f"{item['name']}.held"
        out = open(d / f"{item['name']}.out", "w")
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("KB_EVAL_THREADS", "2"))
        p = subprocess.Popen([sys.executable, me, "--kb-eval", self.kb_root, item["file"], item["ref"], item["build_dir"],
                              str(self.lock_path), str(stamp)], stdout=out, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        out.close()
        self.res_used += item["res_gb"]
        self.host_used += item["host_gb"]
        self.running[p.pid] = (item, p, time.monotonic(), stamp)
        self.stats["eval_first"] = self.stats["eval_first"] or time.monotonic()

    def _finish(self, pid, row):
        item, p, _, stamp = self.running.pop(pid)
        stamp.unlink(missing_ok=True)
        self.res_used -= item["res_gb"]
        self.host_used -= item["host_gb"]
        self.stats["eval_last"] = time.monotonic()
        self._row(item, row)

    def _row(self, item, row):
        b = item.get("built", {})
        row.setdefault("file", item["file"])
        row["built"], row["compile_s"] = b.get("ok", False), b.get("s")
        self.on_row(item["file"], row)

    def _kill(self, pid, why):
        item, p, t, _ = self.running[pid]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        p.wait()
        self._finish(pid, {"file": item["file"], "compiled": True, "correct": False, "error": why,
                           "s": round(time.monotonic() - t, 1)})

    def _watch(self, now):
        for pid, (item, p, t, stamp) in list(self.running.items()):
            if p.poll() is not None:
                text = (self.work / "kb-eval" / f"{item['name']}.out").read_text(errors="replace")
                rows = [ln[len(ROW):] for ln in text.splitlines() if ln.startswith(ROW)]
                row = json.loads(rows[-1]) if rows else {
                    "file": item["file"], "compiled": True, "correct": False,
                    "error": "the evaluating process died: " + ((text.strip().splitlines() or ["no output"])[-1])[:200]}
                self._finish(pid, row)
                continue
            try:
                held = now_wall() - float(stamp.read_text())
            except (OSError, ValueError):
                held = 0.0
            if held > self.hold_max:
                self._kill(pid, f"held the GPU for over {self.hold_max:.0f} s in one phase (hung)")
            elif now - t > self.file_max:
                self._kill(pid, f"no result in {self.file_max:.0f} s")

    def run(self, items):
        """items: dicts with file, ref, build_dir, name; blocks until every one has a row."""
        for it in items:
            n_in, n_out = estimate(it["ref"])
            it["res_gb"], it["peak_gb"], it["host_gb"] = memory(n_in, n_out)
        items = sorted(items, key=lambda it: -it["res_gb"])
        self.building = len(items)
        builder = threading.Thread(target=self._builds, args=(items,), daemon=True)
        builder.start()
        while True:
            with self.cv:
                now = time.monotonic()
                if self.hard_at and now > self.hard_at:
                    for pid in list(self.running):
                        item = self.running[pid][0]
                        self._kill(pid, "killed: the run's time limit")
                        self.on_row(item["file"], {"file": item["file"], "not_run": "killed by the run's time limit"})
                    for item in self.ready:
                        self._row(item, {"file": item["file"], "not_run": "the run's time limit came first"})
                    self.ready = []
                    break
                self._watch(now)
                self._admit(now)
                if self.building == 0 and not self.ready and not self.running:
                    break
                self.cv.wait(0.5)
        with self.cv:
            self.done = True
            if self.wanted and not self.granted:
                self.other_peak, self.granted = self.wanted, True
            self.cv.notify_all()
        if self.stats["eval_first"] and self.stats["eval_last"]:
            self.stats["eval_wall_s"] = round(self.stats["eval_last"] - self.stats["eval_first"], 1)
        return self.stats


def now_wall():
    return time.time()


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--kb-compile":
        child_compile(*sys.argv[2:5])
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "--kb-eval":
        child_eval(*sys.argv[2:8])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
