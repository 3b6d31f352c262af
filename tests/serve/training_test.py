#!/usr/bin/env python3
"""The training loop around the grader (docs/training.md), end to end on the stand-in worker
(tests/stand_in_worker.py), without a GPU: examples/multi_turn.py runs a multi-turn episode
against `kernrl serve --examples 2` with answers replayed from a folder (a compile error, then a
correct kernel); the records carry the trajectory, the turns, the trainer's step and run and the
examples the prompt carried; each step's observation holds the next turn's prompt; POST /v1/prompt
builds prompts; `kernrl report --by turn|trajectory|step` and `kernrl export` read it all back;
`kernrl show --prompt --previous --record` builds the same kind of prompt from files."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_test  # noqa: E402
from serve_test import Server, kernrl_on_stand_in_worker  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "L1_23_Softmax"
SOLUTION = (ROOT / "problems/L1/23_Softmax/solution.cu").read_text()
BROKEN = "```cuda\n" + SOLUTION.replace("__global__", "__global__ not_a_type", 1) + "```\n"
FAILED = []


PASSED = []


def check(name, cond, detail=""):
    """A failure is printed at once with its detail; the passed checks are listed at the end, so
    that a failure comes first in the test's output."""
    if cond:
        PASSED.append(name)
        return
    FAILED.append(name)
    print("FAIL " + name, flush=True)
    print("     " + str(detail)[:3000], flush=True)


def post(s, path, body):
    """POST a JSON body to the server: (status, the parsed answer)."""
    st, parsed, _ = s.http("POST", path, body)
    return st, parsed


def run(*cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kernrl-training-test-"))
    kernrl = kernrl_on_stand_in_worker(args.kernrl)
    answers = tmp / "answers"
    answers.mkdir()
    (answers / "turn_1.md").write_text(BROKEN)
    (answers / "turn_2.cu").write_text(SOLUTION)
    s = Server(kernrl, "--gpus", "0", "--cache-mb", "0", "--examples", "2", "--max-turns", "4",
               compile_only=False)
    trace = s.trace
    try:
        r = run(sys.executable, ROOT / "examples/multi_turn.py", "--url",
                f"ws://127.0.0.1:{s.port}/ws", "--problem", PROBLEM, "--answers", answers,
                "--step", 7, "--run", "ppo-test")
        check("example: the episode ran", r.returncode == 0, r.stderr)
        out = json.loads(r.stdout) if r.returncode == 0 else {"turns": []}
        turns = out["turns"]
        check("example: a compile error, then correct and solved",
              [t["status"] for t in turns] == ["compile_error", "correct"] and out["solved"], out)
        if len(turns) == 2:
            s1, s2 = turns[0]["reward"], turns[1]["reward"]
            check("example: discounted returns R_1 = s_1 + 0.4 s_2",
                  abs(turns[0]["return"] - (s1 + 0.4 * s2)) < 1e-9
                  and abs(turns[1]["return"] - s2) < 1e-9, turns)
        prompt = out.get("last_prompt", "")
        check("example: the step observation's prompt is the next turn's",
              "# Your previous answer (turn 2)" in prompt and "Status: correct" in prompt
              and "# Examples" in prompt and "# What to do now" in prompt, prompt[-2000:])

        st, body = post(s, "/v1/prompt", {"problem": PROBLEM, "previous": BROKEN, "turn": 1,
                                         "examples": 1,
                                         "record": {"status": "compile_error",
                                                    "error": {"category": "compile_error",
                                                              "message": "NVRTC failed",
                                                              "log": "answer.cu(9): error: "
                                                                     "identifier \"not_a_type\" "
                                                                     "is undefined\n"}}})
        check("/v1/prompt: the next turn's prompt with its key error lines",
              st == 200 and body["prompt_name"] == "kernrl.next_turn.v1"
              and "identifier \"not_a_type\" is undefined" in body["prompt"]
              and len(body["examples"]) == 1 and PROBLEM not in body["examples"][0], body)
        st, body = post(s, "/v1/prompt", {"problem": PROBLEM, "examples": 3, "include_own": True})
        check("/v1/prompt: a task prompt may carry the problem's own solution when asked",
              st == 200 and body["prompt_name"] == "kernrl.task.v1"
              and PROBLEM + "/solution.cu" in body["examples"], body)
        st, body = post(s, "/v1/prompt", {"problem": PROBLEM, "language": "fortran",
                                         "previous": "x"})
        check("/v1/prompt: an unknown language is refused", st == 400, body)
        st, rec = post(s, "/v1/grade", {"source": SOLUTION, "trajectory": "t-http", "turn": 1,
                                       "training": {"step": 8, "run": "ppo-test"},
                                       "prompt_examples": ["L1_26_GELU_/solution.cu"]})
        check("/v1/grade: the training fields go into the record",
              st == 200 and rec.get("trajectory") == "t-http" and rec.get("turn") == 1
              and rec.get("training") == {"step": 8, "run": "ppo-test"}
              and rec.get("prompt_examples") == ["L1_26_GELU_/solution.cu"], rec)
        st, body = post(s, "/v1/grade", {"source": SOLUTION, "turn": 0})
        check("/v1/grade: a turn below 1 is refused", st == 400 and "turn" in str(body), body)
    finally:
        rc = s.stop()
    check("serve exits 0", rc == 0, "".join(s.stderr))

    recs = [json.loads(l) for l in trace.read_text().splitlines()]
    ws = [r for r in recs if r.get("trajectory") == out.get("episode_id")]
    check("trace: both turns of the episode, with step, run and examples",
          [r.get("turn") for r in ws] == [1, 2]
          and all(r.get("training") == {"step": 7, "run": "ppo-test"} for r in ws)
          and all(len(r.get("prompt_examples", [])) == 2 for r in ws), ws)

    r = run(kernrl, "report", trace, "--by", "turn", "--format", "json")
    rep = json.loads(r.stdout) if r.returncode == 0 else {}
    tr = (rep.get("trajectories") or {}).get("runs", [{}])[0]
    check("report: per-turn rates, solved within 2 turns, turns to correct",
          r.returncode == 0 and tr.get("trajectories") == 2 and tr["solved_within"]["2"] == 1.0
          and tr["solved_within"]["1"] == 0.5 and tr["per_turn"][0]["compile_rate"] == 0.5,
          r.stdout[:3000] + r.stderr)
    r = run(kernrl, "report", trace, "--by", "turn", "--format", "csv")
    check("report: --by turn --format csv is the per-turn table",
          r.returncode == 0 and r.stdout.startswith("run,turn,trajectories,format_rate,compile_rate,correct_rate"),
          r.stdout + r.stderr)
    r = run(kernrl, "report", trace, "--by", "step", "--format", "md")
    check("report: --by step draws the curve table by step",
          r.returncode == 0 and "## Training curves" in r.stdout and "| ppo-test | 7 |" in r.stdout,
          r.stdout + r.stderr)
    r = run(kernrl, "export", trace, "--out", "-")
    rows = [json.loads(l) for l in r.stdout.splitlines()] if r.returncode == 0 else []
    first = [x for x in rows if x.get("trajectory") == out.get("episode_id") and x.get("turn") == 1]
    check("export: rows carry the trajectory, the turn and the discounted return",
          len(first) == 1 and turns and abs(first[0]["return"] - turns[0]["return"]) < 1e-9,
          rows[:3])

    # kernrl show --prompt --previous --record from files: the record eval --json wrote.
    prev = tmp / "previous.md"
    prev.write_text(BROKEN)
    r = run(kernrl, "eval", prev, "--problem", PROBLEM, "--compile-only", "--json")
    (tmp / "record.json").write_text(r.stdout)
    r = run(kernrl, "show", PROBLEM, "--prompt", "--previous", prev, "--record",
            tmp / "record.json", "--turn", 1)
    check("show --prompt --previous --record: status, key error lines, instruction",
          r.returncode == 0 and "Status: compile_error" in r.stdout and "not_a_type" in r.stdout
          and "Fix the compile errors" in r.stdout, r.stdout[-2500:] + r.stderr)
    # grade-dir's trajectory layouts: a folder per trajectory and KernelBench names with _turn_T.
    gen = tmp / "gen"
    (gen / PROBLEM / "ep0").mkdir(parents=True)
    (gen / PROBLEM / "ep0" / "turn_1.md").write_text(BROKEN)
    (gen / PROBLEM / "ep0" / "turn_2.cu").write_text(SOLUTION)
    (gen / "kb").mkdir()
    (gen / "kb" / "level_1_problem_23_sample_3_turn_1_kernel.cu").write_text(SOLUTION)
    r = run(kernrl, "grade-dir", gen, "--compile-only", "--quiet", "--out", tmp / "gen.jsonl")
    got = sorted((x.get("trajectory"), x.get("turn"), x.get("sample"), x.get("status"))
                 for x in map(json.loads, (tmp / "gen.jsonl").read_text().splitlines()))
    check("grade-dir: trajectories and turns from the layouts", r.returncode == 0 and got == [
        (PROBLEM + "/ep0", 1, 0, "compile_error"), (PROBLEM + "/ep0", 2, 0, "compiled"),
        ("kb/level_1_problem_23_sample_3", 1, 3, "compiled")], (got, r.stderr))
    shutil.rmtree(tmp, ignore_errors=True)
    for name in PASSED:
        print("ok   " + name)
    print("FAILED: " + ", ".join(FAILED) if FAILED else "all passed", flush=True)
    return 1 if FAILED else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        for d in serve_test.scratch:
            shutil.rmtree(d, ignore_errors=True)
    sys.exit(rc)
