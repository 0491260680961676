"""Session 59: a CPU walk of step 96's fold_partials (fold_tree.patch) as the CUDA code indexes it:
for chunk counts 2-264, CTA sizes 288-1024, hidden sizes and grids, every position of dw is
written once, by the run-0 thread of its tile, with FoldRuns' runs summed in chunk order and the
run sums added in the fixed tree; shared-memory slots stay inside the CTA's threads; the result
does not depend on the grid. Every value is the expression that computes it (session 60: a tree
of additions, from +0.0, of chunk partials), so a position's result equals the reference only if
the walk adds the same terms in the same order: the order is a function of the chunk count alone,
whatever the CTA size, the hidden size and the grid.
  python fold_sim.py"""
import itertools

K = 8  # kFoldRunChunks
ZERO = ("+0.0",)


def add(a, b):
    """The FP64 addition a + b, as an expression."""
    return ("+", a, b)


def fold_runs(n):
    shift = 0
    while (K << shift) < n:
        shift += 1
    count = 1 << shift
    per_run = (n + count - 1) >> shift
    return shift, count, per_run


def expected(n, pos, value):
    shift, count, per_run = fold_runs(n)
    sums = []
    for r in range(count):
        s = ZERO
        for c in range(r * per_run, min(r * per_run + per_run, n)):
            s = add(s, value(c, pos))
        sums.append(s)
    width = 1
    while width < count:  # the tree: run r += run r + width where r % (2 width) == 0
        for r in range(0, count, 2 * width):
            sums[r] = add(sums[r], sums[r + width])
        width <<= 1
    return sums[0]


def simulate(n, block, hidden, grid, value):
    shift, count, per_run = fold_runs(n)
    assert count <= block, (n, block)
    tile_width = block >> shift
    assert tile_width >= 1
    tiles = -(-hidden // tile_width)
    out = {}
    for b in range(grid):
        for tile in range(b, tiles, grid):
            seg = [None] * block
            for t in range(block):
                run = t // tile_width
                col = t - run * tile_width
                in_tile = run < count
                pos = tile * tile_width + col
                live = in_tile and pos < hidden
                c_begin = run * per_run
                c_end = min(c_begin + per_run, n)
                s = ZERO
                for k in range(K):
                    if c_begin + k < c_end and live:
                        s = add(s, value(c_begin + k, pos))
                if in_tile:
                    seg[t] = s
            width = 1
            while width < count:
                for t in range(block):
                    run = t // tile_width
                    if run < count and (run & (2 * width - 1)) == 0:
                        other = t + width * tile_width
                        assert other < block
                        seg[t] = add(seg[t], seg[other])
                width <<= 1
            for t in range(block):
                run = t // tile_width
                col = t - run * tile_width
                pos = tile * tile_width + col
                if run == 0 and pos < hidden:
                    assert pos not in out, (n, block, hidden, grid, pos)
                    out[pos] = seg[t]
    return out


def value(c, pos):
    """Chunk c's partial at position pos."""
    return ("partial", c, pos)


bad = 0
cases = 0
for n, block, hidden, grid in itertools.product(
        (2, 8, 9, 16, 17, 33, 64, 65, 131, 132, 200, 256, 263, 264),
        (288, 448, 512, 1024), (64, 776, 2048), (1, 5, 37, 264)):
    if n > 8 and block < 288:
        continue
    got = simulate(n, block, hidden, grid, value)
    cases += 1
    if sorted(got) != list(range(hidden)) or any(
            got[p] != expected(n, p, value) for p in range(hidden)):
        bad += 1
        print("FAIL", n, block, hidden, grid)
print(f"fold_sim: {cases} cases, {bad} failures")
