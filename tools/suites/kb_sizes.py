"""Smaller size sets for a KernelBench problem, and tensor shapes as expressions over the sizes.

KernelBench gives one size per problem (the bench size). kernrl checks a kernel at smaller sizes
too, including odd ones and ones that are not multiples of 32. The test sets shrink every size
constant above 8 (kernel sizes, strides and small counts stay): set 1 to an odd value near 1/16,
set 2 to a value near 1/8 that is not a multiple of 32, set 3 near 1/4. A set whose module does
not run (a size that must divide another, a Linear layer sized for a fixed image) is retried with
one constant at a time kept at its bench value.

A constant the module divides by another (an embedding by a head count: kb_source.group_sizes)
keeps its bench quotient: with the count shrunk, it becomes the bench group size times the count,
so that a kernel specialised on the head size, as attention kernels are, meets the same head size
at every set.
"""

import math

KEEP_AT_OR_BELOW = 8
MAX_TEST_ELEMENTS = 1 << 22  # inputs of one test set, so that the build and the checks stay quick
MAX_REAL_BENCH = 1 << 25  # bench inputs run for real where the meta device cannot (torch 1.13)


def show(sizes):
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def _odd(v):
    return v if v % 2 else v + 1


def _not_32(v):
    return v + 1 if v % 32 == 0 else v


# (bench value, factor, the constant's index): constants of equal bench value get different test
# values, so that each tensor dimension is matched to the one constant it is.
SHRINK = (
    lambda v, f, i: _odd(max(3, v // (16 * f))) + 2 * i,
    lambda v, f, i: _not_32(max(5, v // (8 * f) + 5) + i),
    lambda v, f, i: max(4, v // (4 * f)),
)


class TooBig(Exception):
    """A size set whose inputs or weights exceed MAX_TEST_ELEMENTS: shrink further."""


def shrinkable(bench):
    return [k for k, v in bench.items() if v > KEEP_AT_OR_BELOW]


def candidates(bench, which, factor, groups=()):
    names = shrinkable(bench)
    # A head count shrinks even at 8 or below (its embedding follows), down to 2, never above its
    # bench value.
    names += [g for _, g in groups if g not in names and bench[g] > 2]
    c = {k: SHRINK[which](bench[k], factor, i) for i, k in enumerate(names)}
    for _, count in groups:
        if count not in c:
            continue
        if bench[count] <= KEEP_AT_OR_BELOW:
            c[count] = (bench[count] - 1, bench[count] // 2, (bench[count] + 1) // 3)[which]
        c[count] = max(2, min(c[count], bench[count] - 1))
    for whole, count in groups:
        if whole in c:
            c[whole] = bench[whole] // bench[count] * c.get(count, bench[count])
    return c


def choose_tests(bench, try_set, groups=()):
    """Three test size sets. `try_set(sizes)` builds and runs the problem at `sizes` (a subset of
    the constants, the rest keep their bench values), returning the SizeSet or raising. A set is
    made smaller (factor 2, 4, ...) while its inputs exceed MAX_TEST_ELEMENTS."""
    sets, seen, errors = [], set(), []
    for which in range(len(SHRINK)):
        for factor in (1, 2, 4, 8, 16, 64, 256):
            try:
                got = _try_variants(bench, candidates(bench, which, factor, groups), try_set, seen, errors)
            except TooBig as e:
                errors.append(f"still too large at 1/{factor}: {e}")
                continue
            if got is not None:
                seen.add(tuple(sorted({**bench, **got.sizes}.items())))
                sets.append(got)
            break
    return sets, errors


def check_elements(tensors, what, limit=MAX_TEST_ELEMENTS):
    n = sum(math.prod(t.shape) for t in tensors)
    if n > limit:
        raise TooBig(f"{what}: {n} elements")


def _tied(bench, shrunk):
    """`shrunk` with the constants of equal bench value given one test value (the first's): for
    a module that needs them equal (HingeLoss broadcasts a [batch] tensor over [batch, dim])."""
    first = {}
    for k in shrunk:
        first.setdefault(bench[k], k)
    return {k: shrunk[first[bench[k]]] for k in shrunk}


def _try_variants(bench, shrunk, try_set, seen, errors):
    """`shrunk` whole, else with one constant at a time back at its bench value, else one
    constant alone shrunk, else with the constants of equal bench value tied."""
    variants = [shrunk] + [{k: v for k, v in shrunk.items() if k != keep} for keep in shrunk]
    variants += [{k: shrunk[k]} for k in shrunk]  # one constant alone (a batch size, say)
    tied = _tied(bench, shrunk)
    if tied != shrunk:
        variants.append(tied)
    too_big = None
    for v in variants:
        if not v or tuple(sorted({**bench, **v}.items())) in seen:
            continue
        try:
            return try_set(v)
        except TooBig as e:
            too_big = e
        except Exception as e:  # noqa: BLE001 - the module's own errors at these sizes
            errors.append(f"{show(v)}: {type(e).__name__}: {str(e).strip()[:160]}")
    if too_big is not None:
        raise too_big
    return None


class Shapes:
    """Names each tensor dimension by a size: a size constant whose value matches at every size
    set, else a new size `<tensor>_dim<k>` holding the dimension's value at each set."""

    def __init__(self, size_sets):
        self.sets = [dict(s) for s in size_sets]  # bench first
        self.extra = []

    def expr(self, tensor, k, values):
        for name in self.sets[0]:
            if all(s[name] == v for s, v in zip(self.sets, values)):
                return name
        if len(set(values)) == 1:
            return str(values[0])
        found = self._two_sizes(values)
        if found:
            return found
        name = "".join(c if c.isalnum() else "_" for c in tensor) + f"_dim{k}"
        for s, v in zip(self.sets, values):
            s[name] = v
        self.extra.append(name)
        return name

    # Expressions of two sizes tried for a dimension no size equals (a convolution's output is
    # `height - kernel_size + 1`, a flattened one `channels * length`).
    PAIRS = (("{a} * {b}", lambda a, b: a * b), ("{a} - {b} + 1", lambda a, b: a - b + 1),
             ("{a} / {b}", lambda a, b: a // b if b and a % b == 0 else None),
             ("{a} + {b}", lambda a, b: a + b), ("{a} - {b}", lambda a, b: a - b))

    def _two_sizes(self, values):
        names = [n for n in self.sets[0] if n not in self.extra]
        for text, f in self.PAIRS:
            for a in names:
                for b in names:
                    if a != b and all(f(s[a], s[b]) == v for s, v in zip(self.sets, values)):
                        return text.format(a=a, b=b)
        return None

    def shape(self, tensor, per_set_shapes):
        rank = {len(sh) for sh in per_set_shapes}
        if len(rank) != 1:
            raise ValueError(f"'{tensor}' has a different rank at different sizes")
        return [self.expr(tensor, k, [sh[k] for sh in per_set_shapes]) for k in range(rank.pop())]
