"""What "evaluate a candidate" means. Imports only torch, triton, numpy and the standard library,
so this package runs alone on any GPU host."""

# Part of every cached evaluation's key: bump it whenever a verdict could change for the same candidate
# and spec. 0.2.0: specs' MEAN_ABS_ERR bound; a fresh-input call whose sizes differ from the first's.
# 0.3.0: torch.compile baselines compiled per case with static shapes (the shared module went dynamic).
# 0.3.1: the timing lead before each timed call is sized from the call's measured host time (timing.py).
# 0.3.2: an fp32 output that misses the fixed tolerance passes if it is as exact as the reference against a
# float64 run of it (exactness.py): long fp32 reductions summed in another order than ATen's used to fail.
# A spec without FLOPS/BYTES gets a floor from its reference's inputs, outputs, state and counted FLOPs.
# 0.3.3: the fp32 compute floor uses the faster of fp32 and TF32 / 3 (three TF32 products, as exact as fp32).
# 0.4.0: every timed call gets freshly written inputs and a random sample of timed outputs is checked (a result
# remembered across calls was timed as a win); the fp32 precision floor; thread starts counted only when candidate
# code makes them; each call checked and judged before the next (a candidate returning an unwritten buffer is now
# judged incorrect on its first call rather than rejected at its second).
# 0.4.1: a case measured above 1.0 of its floor is flagged (physics.py): under the compute term only, the floor is
# re-based on bytes and launch; under those too, the fitness is withheld until explained.
# 0.4.2: a simulation samples fewer programs of a launch whose programs cost many interpreted steps (a
# non-uniform grid's estimate can move), and runs on untouched big tensors (a 17 GiB case no longer fails).
# 0.4.3: a simulated target checks at the production constructor args (the ``sim`` case set, shrink.py).
# 0.4.4: a search node's timing stops once every median is known to 0.5% (timing.py); every GPU step of a
# timing session (modules, inputs, warm-ups) holds the device shared, so nothing runs beside another's timing.
EVALUATOR_VERSION = "0.4.4"
