#!/usr/bin/env python3
"""Rewards for TRL from `kernrl serve`: a reward function for GRPOTrainer and a multi-turn rollout.

`kernrl_reward` has the signature TRL's trainers call reward functions with: the prompts, the
completions (strings, or lists of chat messages), and the dataset's other columns as keyword
arguments; it needs a `problem_id` column. One call grades the whole batch through one
/v1/grade-batch request, so every completion of a GRPO group is graded at once on every GPU of
the server (identical completions are graded once: the server's cache).

    from trl import GRPOConfig, GRPOTrainer
    from trl_reward import kernrl_reward, prompt_dataset
    trainer = GRPOTrainer(model=..., reward_funcs=kernrl_reward,
                          train_dataset=prompt_dataset(["L1_23_Softmax", "L1_26_GELU_"]), ...)

`multi_turn_rollout` runs one OpenEnv episode over a WebSocket session: the model answers, the
server's feedback goes back as the next user turn, until the episode is done.

Set KERNRL_SERVE_URL (default http://127.0.0.1:8000) and, when the server wants one,
KERNRL_SERVE_TOKEN.
"""
import os

from kernrl_client import KernrlEnv, KernrlHTTP

URL = os.environ.get("KERNRL_SERVE_URL", "http://127.0.0.1:8000")
TOKEN = os.environ.get("KERNRL_SERVE_TOKEN")

# The reward of an answer that was not graded (the server's queue was full, its deadline passed,
# or it is shutting down), and of a compile-only server's records (reward null: nothing ran).
NOT_GRADED = 0.0


def _text(completion):
    """A completion as TRL passes it: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content", "") for m in completion if m.get("role") == "assistant")


def kernrl_reward(prompts, completions, problem_id, **kwargs):
    """One float per completion: the record's reward (the server's reward preset)."""
    client = KernrlHTTP(URL, TOKEN)
    items = [{"source": _text(c), "problem": p, "label": f"trl/{i}"}
             for i, (c, p) in enumerate(zip(completions, problem_id))]
    rewards = [NOT_GRADED] * len(items)
    for index, record, _error in client.grade_batch(items):
        if record is not None and record.get("reward") is not None:
            rewards[index] = float(record["reward"])
    return rewards


def prompt_dataset(problem_ids):
    """A dataset of {"prompt", "problem_id"} rows: kernrl's task prompt for each problem."""
    from datasets import Dataset  # TRL's dependency

    client = KernrlHTTP(URL, TOKEN)
    return Dataset.from_list([{"prompt": [{"role": "user", "content": client.prompt(p)}],
                               "problem_id": p} for p in problem_ids])


def multi_turn_rollout(generate, problem_id, max_turns=None):
    """One episode: `generate(messages) -> str` answers; the server grades each answer and its
    feedback becomes the next user message. Returns (messages, rewards, final state)."""
    with KernrlEnv(URL, TOKEN) as env:
        first = env.reset(problem_id=problem_id)
        obs = first["observation"]
        messages = [{"role": "user", "content": obs["problem_description"]}]
        rewards = []
        turns = max_turns or obs["max_turns"]
        for _ in range(turns):
            answer = generate(messages)
            messages.append({"role": "assistant", "content": answer})
            result = env.step(answer)
            rewards.append(result["reward"] if result["reward"] is not None else NOT_GRADED)
            if result["done"]:
                break
            messages.append({"role": "user", "content": "Feedback on your kernel:\n" +
                             result["observation"]["feedback"] + "\nImprove it."})
        return messages, rewards, env.state()


if __name__ == "__main__":
    # A smoke test without a model: the bundled solution of L1_23_Softmax as every completion.
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    sol = (root / "problems/L1/23_Softmax/solution.cu").read_text()
    print(kernrl_reward(["p"] * 3, [sol, "```cuda\n" + sol + "```", "no kernel"],
                        problem_id=["L1_23_Softmax"] * 3))
    msgs, rs, st = multi_turn_rollout(lambda m: sol, "L1_23_Softmax", max_turns=2)
    print(rs, st)
