#!/usr/bin/env python3
"""A multi-turn episode against `kernrl serve`, the way an RL loop runs one (docs/training.md).

The policy here is a stand-in that replays answers from a folder: turn T answers with the file
whose name starts with `turn_T` (turn_1.md, turn_2.cu, ...). A real policy gives the observation's
`prompt` (the next turn's prompt kernrl builds: the problem, the previous answer, what became of
it, what to fix) to a model instead. Each step sends the trainer's step and run in the action's
`metadata`, so that the records carry them and `kernrl report --by step` can draw curves.

    kernrl serve --port 8000 --trace runs/train.jsonl &
    examples/multi_turn.py --url ws://127.0.0.1:8000/ws --problem L1_23_Softmax \\
        --answers my_answers/ --step 12 --run ppo-1

It prints one JSON object: the episode id, each turn's status, reward and discounted return
R_t = s_t + gamma s_{t+1} + ... (gamma 0.4 by default, as `kernrl report --gamma`), and whether it
was solved. Needs Python's standard library and the `websockets` package (Debian:
python3-websockets).
"""
import argparse
import asyncio
import json
import pathlib
import sys

import websockets


class ReplayPolicy:
    """Answers turn T with the text of the folder's file named turn_T* (the last file again when
    there are fewer files than turns)."""

    def __init__(self, folder):
        files = sorted(pathlib.Path(folder).glob("turn_*"), key=lambda p: int(p.stem.split("_")[1]))
        if not files:
            raise SystemExit(f"no turn_* files in {folder}")
        self.answers = [p.read_text() for p in files]

    def act(self, prompt, turn):
        """The answer for `turn` (1-based) given `prompt`; a model would be called here."""
        del prompt  # a replay needs no prompt
        return self.answers[min(turn, len(self.answers)) - 1]


def discounted_returns(rewards, gamma):
    """R_t = s_t + gamma * R_{t+1}: each turn's return over the turns after it."""
    out, acc = [], 0.0
    for s in reversed(rewards):
        acc = s + gamma * acc
        out.append(acc)
    return out[::-1]


async def call(ws, message):
    await ws.send(json.dumps(message))
    reply = json.loads(await ws.recv())
    if reply.get("type") == "error":
        raise RuntimeError(f"kernrl serve: {reply['data']}")
    return reply["data"]


async def episode(url, problem, policy, step, run, max_turns, gamma, token=None):
    # (websockets 10 to 13 call the header option extra_headers, 14 and later additional_headers.)
    kwargs = {"extra_headers": {"Authorization": f"Bearer {token}"}} if token else {}
    async with websockets.connect(url, max_size=None, **kwargs) as ws:
        first = await call(ws, {"type": "reset", "data": {"problem_id": problem}})
        state = await call(ws, {"type": "state"})
        obs = first["observation"]
        prompt = obs["problem_description"]  # the task prompt, with examples under --examples
        turns = []
        limit = min(max_turns or obs["max_turns"], obs["max_turns"])
        for turn in range(1, limit + 1):
            answer = policy.act(prompt, turn)
            metadata = {"step": step, "run": run} if step is not None else {"run": run}
            result = await call(ws, {"type": "step", "data": {"code": answer, "metadata": metadata}})
            obs = result["observation"]
            turns.append({"turn": obs["turn"], "status": obs.get("status"),
                          "reward": result["reward"], "speedup": obs.get("speedup"),
                          "prompt_chars": len(obs.get("prompt") or "")})
            prompt = obs.get("prompt") or prompt  # the next turn's prompt
            if result["done"]:
                break
        state = await call(ws, {"type": "state"})
        await ws.send(json.dumps({"type": "close"}))
    rewards = [t["reward"] if t["reward"] is not None else 0.0 for t in turns]
    for t, r in zip(turns, discounted_returns(rewards, gamma)):
        t["return"] = r
    return {"episode_id": state["episode_id"], "problem": problem, "solved": state["solved"],
            "best_speedup": state["best_speedup"], "gamma": gamma, "turns": turns,
            "last_prompt": prompt}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    ap.add_argument("--problem", required=True, help="a problem id, e.g. L1_23_Softmax")
    ap.add_argument("--answers", required=True, help="folder of turn_1*, turn_2*, ... answers")
    ap.add_argument("--step", type=int, help="the trainer's step, written into the records")
    ap.add_argument("--run", default="example", help="the trainer's run name")
    ap.add_argument("--max-turns", type=int, default=0, help="at most this many turns (default: the server's)")
    ap.add_argument("--gamma", type=float, default=0.4)
    ap.add_argument("--token", help="the server's bearer token, if it has one")
    args = ap.parse_args()
    out = asyncio.run(episode(args.url, args.problem, ReplayPolicy(args.answers), args.step,
                              args.run, args.max_turns, args.gamma, args.token))
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
