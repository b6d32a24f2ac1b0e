"""CPU checks of kgate's KernelBench-format suite (kernelbench/level{1,2,3}).

Every problem file must follow the format and kgate's `# kgate:small` convention, and
its small variant must give a meaningful reference on CPU: finite, deterministic, not
constant, not near zero, different for a different input seed, in float32 and
float64, for the inputs as written and with random sign flips. Reference solutions:
the plain-torch ones in kernelbench/solutions/cpu/ must match their problem without
calling its main op; the Triton ones in kernelbench/solutions/level*/ must parse and
keep the problem's constructor and parameters.

The small-value rewrite is implemented here on purpose (the Python worker has its own
implementation of the same convention); the two are meant to agree.

Run: python -m pytest tests/python/test_suite_problems.py -q
"""
from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import time
import tokenize
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "kernelbench"
LEVELS = ("level1", "level2", "level3")
MIN_PROBLEMS = {"level1": 20, "level2": 12, "level3": 5}

SMALL_RE = re.compile(r"^#\s*kgate:small\b(?P<body>.*)$", re.MULTILINE)
TUNE_RE = re.compile(r"^#\s*kgate:tune\b(?P<body>.*)$", re.MULTILINE)

# Small variants must run the reference forward well under this on one core.
SMALL_FORWARD_LIMIT_S = 0.2
MODEL_SEED = 1234
INPUT_SEEDS = (0, 1)
SOLUTION_TOL = 1e-4

# Plain-torch CPU solutions: patterns (case-insensitive, searched in the code with
# comments and strings removed) that would mean the solution calls the problem's
# main op instead of computing it. Every CPU solution needs an entry.
CPU_FORBIDDEN = {
    "level1/6_ReLU": [r"relu", r"clamp", r"hardtanh", r"threshold"],
    "level1/7_GELU": [r"gelu"],
    "level1/18_Softmax": [r"softmax", r"logsumexp"],
    "level1/24_MSELoss": [r"mse", r"\bloss\b", r"l1_loss"],
    "level2/1_Linear_GELU": [r"gelu", r"\bF\s*\.\s*linear", r"self\s*\.\s*linear\s*\("],
    "level2/3_Linear_Scale_Sigmoid": [r"sigmoid", r"self\s*\.\s*linear\s*\("],
    "level3/1_MLP": [r"relu", r"\bF\s*\.\s*linear", r"layer\s*\(", r"\]\s*\("],
}


# --------------------------------------------------------------------------------------
# The `# kgate:small NAME=VALUE ...` convention
# --------------------------------------------------------------------------------------

def parse_small(source: str) -> dict[str, object] | None:
    """Values of the file's `# kgate:small` line, or None when it has none."""
    match = SMALL_RE.search(source)
    if match is None:
        return None
    values: dict[str, object] = {}
    for item in match.group("body").split():
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"bad kgate:small item {item!r}")
        values[name] = ast.literal_eval(text)
    return values


def top_level_assignments(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def apply_small(source: str, values: dict[str, object]) -> str:
    """Rewrite the top-level `NAME = ...` assignments named in values."""
    tree = ast.parse(source)
    seen: set[str] = set()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id in values:
            name = targets[0].id
            node.value = ast.parse(repr(values[name]), mode="eval").body
            seen.add(name)
    missing = set(values) - seen
    if missing:
        raise ValueError(f"kgate:small names no top-level assignment: {sorted(missing)}")
    return ast.unparse(ast.fix_missing_locations(tree))


def load_source(source: str, name: str, filename: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def load_problem(path: Path, small: bool) -> types.ModuleType:
    source = path.read_text()
    if small:
        source = apply_small(source, parse_small(source) or {})
    return load_source(source, f"kgate_problem_{path.parent.name}_{path.stem}", str(path))


# --------------------------------------------------------------------------------------
# Discovery
# --------------------------------------------------------------------------------------

def problem_files(level: str) -> list[Path]:
    return sorted(p for p in (SUITE / level).glob("*.py") if not p.name.startswith("_"))


ALL_PROBLEMS = [p for level in LEVELS for p in problem_files(level)]
PROBLEM_IDS = [f"{p.parent.name}/{p.stem}" for p in ALL_PROBLEMS]
CPU_SOLUTIONS = sorted((SUITE / "solutions" / "cpu").glob("level*/*.py"))
TRITON_SOLUTIONS = sorted((SUITE / "solutions").glob("level*/*.py"))


def solution_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def problem_for(solution: Path) -> Path:
    return SUITE / solution.parent.name / solution.name


# --------------------------------------------------------------------------------------
# Running a problem
# --------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def one_thread():
    """Measure on one core, as the small-variant budget is stated."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_model(module, cls_name: str, dtype):
    torch.manual_seed(MODEL_SEED)
    model = getattr(module, cls_name)(*module.get_init_inputs())
    return model.to(dtype)


def make_inputs(module, seed: int, dtype, flip_signs: bool) -> list:
    torch.manual_seed(seed)
    inputs = module.get_inputs()
    out = []
    gen = torch.Generator().manual_seed(10_000 + seed)
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            if flip_signs:
                signs = torch.randint(0, 2, x.shape, generator=gen).to(x.dtype) * 2 - 1
                x = x * signs
            x = x.to(dtype)
        out.append(x)
    return out


def as_tensor(out) -> torch.Tensor:
    if isinstance(out, (tuple, list)):
        return torch.cat([o.reshape(-1).double() for o in out])
    return out


def check_meaningful(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
    """a and b: outputs for two input seeds."""
    for out in (a, b):
        x = out.double()
        assert torch.isfinite(x).all(), f"{what}: non-finite output"
        scale = x.abs().max().item()
        assert scale > 1e-3, f"{what}: output near zero (max |y| = {scale:.3g})"
        if x.numel() > 1:
            spread = (x.max() - x.min()).item()
            assert spread > 1e-6 * max(1.0, scale), f"{what}: constant output"
    diff = (a.double() - b.double()).abs().max().item()
    scale = max(1.0, a.double().abs().max().item())
    assert diff > 1e-6 * scale, f"{what}: output does not depend on the input seed"


# --------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
def test_level_has_enough_problems(level):
    files = problem_files(level)
    assert len(files) >= MIN_PROBLEMS[level], [p.name for p in files]
    names = [p.stem for p in files]
    for name in names:
        number, sep, rest = name.partition("_")
        assert number.isdigit() and sep and rest, f"{level}/{name}: expected NUMBER_Name.py"
    numbers = [int(n.partition("_")[0]) for n in names]
    assert len(set(numbers)) == len(numbers), f"{level}: duplicate problem numbers"


@pytest.mark.parametrize("path", ALL_PROBLEMS, ids=PROBLEM_IDS)
def test_problem_format(path):
    source = path.read_text()
    tree = ast.parse(source)
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "Model" in classes
    assert {"get_inputs", "get_init_inputs"} <= functions
    small = parse_small(source)
    assert small, "missing or empty '# kgate:small NAME=VALUE ...' line"
    missing = set(small) - top_level_assignments(tree)
    assert not missing, f"kgate:small names that are not top-level assignments: {missing}"
    # Importable at full size (nothing heavy happens at import).
    module = load_problem(path, small=False)
    assert issubclass(module.Model, torch.nn.Module)
    assert isinstance(module.get_init_inputs(), list)


@pytest.mark.parametrize("path", ALL_PROBLEMS, ids=PROBLEM_IDS)
def test_problem_small_reference_is_meaningful(path):
    module = load_problem(path, small=True)
    for dtype in (torch.float32, torch.float64):
        model = make_model(module, "Model", dtype)
        for flip in (False, True):
            outs = []
            for seed in INPUT_SEEDS:
                inputs = make_inputs(module, seed, dtype, flip)
                with torch.no_grad():
                    start = time.perf_counter()
                    first = as_tensor(model(*inputs))
                    elapsed = time.perf_counter() - start
                    start = time.perf_counter()
                    again = as_tensor(model(*inputs))
                    elapsed = min(elapsed, time.perf_counter() - start)
                what = f"{dtype}, flip={flip}, seed={seed}"
                assert elapsed < SMALL_FORWARD_LIMIT_S, f"{what}: small forward took {elapsed:.3f} s"
                assert torch.equal(first, again), f"{what}: forward is not deterministic"
                if first.is_floating_point():
                    assert first.dtype == dtype, f"{what}: output dtype {first.dtype}"
                outs.append(first)
            check_meaningful(outs[0], outs[1], f"{dtype}, flip={flip}")


# --------------------------------------------------------------------------------------
# Plain-torch CPU solutions
# --------------------------------------------------------------------------------------

def code_without_comments_or_strings(source: str) -> str:
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            continue
        if sys.version_info >= (3, 12) and tok.type in (
                tokenize.FSTRING_START, tokenize.FSTRING_MIDDLE, tokenize.FSTRING_END):
            continue
        kept.append(tok.string)
    return " ".join(kept)


def test_there_are_cpu_solutions_for_every_level():
    levels = {p.parent.name for p in CPU_SOLUTIONS}
    assert levels == set(LEVELS)


@pytest.mark.parametrize("path", CPU_SOLUTIONS, ids=[solution_id(p) for p in CPU_SOLUTIONS])
def test_cpu_solution_avoids_main_op(path):
    key = solution_id(path)
    assert key in CPU_FORBIDDEN, f"add the main-op patterns of {key} to CPU_FORBIDDEN"
    code = code_without_comments_or_strings(path.read_text())
    for pattern in CPU_FORBIDDEN[key]:
        hit = re.search(pattern, code, re.IGNORECASE)
        assert hit is None, f"{key} uses the main op: {hit.group(0)!r}"


@pytest.mark.parametrize("path", CPU_SOLUTIONS, ids=[solution_id(p) for p in CPU_SOLUTIONS])
def test_cpu_solution_matches_problem(path):
    problem_path = problem_for(path)
    assert problem_path.exists(), f"no problem {problem_path.relative_to(REPO)}"
    problem = load_problem(problem_path, small=True)
    solution = load_source(path.read_text(), f"kgate_cpu_solution_{path.stem}", str(path))
    reference = make_model(problem, "Model", torch.float32)
    torch.manual_seed(MODEL_SEED + 1)  # different init: the state_dict must carry everything
    candidate = solution.ModelNew(*problem.get_init_inputs())
    candidate.load_state_dict(reference.state_dict(), strict=True)
    for seed in INPUT_SEEDS:
        for flip in (False, True):
            inputs = make_inputs(problem, seed, torch.float32, flip)
            with torch.no_grad():
                expected = as_tensor(reference(*[x.clone() for x in inputs]))
                got = as_tensor(candidate(*[x.clone() for x in inputs]))
            assert got.shape == expected.shape and got.dtype == expected.dtype
            torch.testing.assert_close(got, expected, atol=SOLUTION_TOL, rtol=SOLUTION_TOL,
                                       msg=lambda m: f"seed {seed}, flip={flip}: {m}")


# --------------------------------------------------------------------------------------
# Triton solutions (checked statically here; they run on a GPU runner)
# --------------------------------------------------------------------------------------

def init_signature(tree: ast.Module, cls_name: str) -> str:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args
                    return ast.dump(ast.arguments(
                        posonlyargs=[ast.arg(a.arg) for a in args.posonlyargs],
                        args=[ast.arg(a.arg) for a in args.args],
                        vararg=args.vararg and ast.arg(args.vararg.arg),
                        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
                        kw_defaults=args.kw_defaults, kwarg=args.kwarg and ast.arg(args.kwarg.arg),
                        defaults=args.defaults))
            return "(no __init__)"
    raise AssertionError(f"no class {cls_name}")


class _Anything:
    """Stands in for any triton.language attribute when Triton is not installed."""

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getitem__(self, key):
        return _Anything()


def _stub_triton() -> dict[str, types.ModuleType]:
    triton = types.ModuleType("triton")
    language = types.ModuleType("triton.language")
    language.__getattr__ = lambda name: _Anything()
    triton.language = language

    def jit(fn=None, **kwargs):
        return fn if fn is not None else (lambda f: f)

    triton.jit = jit
    triton.autotune = lambda *a, **k: (lambda f: f)
    triton.heuristics = lambda *a, **k: (lambda f: f)
    triton.Config = lambda *a, **k: (a, k)
    triton.cdiv = lambda a, b: -(-a // b)
    triton.next_power_of_2 = lambda n: 1 << max(0, int(n) - 1).bit_length()
    return {"triton": triton, "triton.language": language}


def test_there_are_triton_solutions_for_every_level():
    levels = {p.parent.name for p in TRITON_SOLUTIONS}
    assert levels == set(LEVELS)


@pytest.mark.parametrize("path", TRITON_SOLUTIONS, ids=[solution_id(p) for p in TRITON_SOLUTIONS])
def test_triton_solution_shape(path, monkeypatch):
    problem_path = problem_for(path)
    assert problem_path.exists(), f"no problem {problem_path.relative_to(REPO)}"
    source = path.read_text()
    tree = ast.parse(source)
    imports = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}
    assert {"triton", "triton.language"} <= imports
    kernels = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
               and any("jit" in ast.unparse(d) for d in n.decorator_list)]
    assert kernels, "no @triton.jit kernel"
    assert init_signature(tree, "ModelNew") == init_signature(ast.parse(problem_path.read_text()), "Model")
    tune = TUNE_RE.search(source)
    if tune:
        names = {item.partition("=")[0] for item in tune.group("body").split()}
        missing = names - top_level_assignments(tree)
        assert not missing, f"kgate:tune names that are not top-level assignments: {missing}"

    # Parameters: the problem's state_dict must load into ModelNew. Construct on CPU.
    if importlib.util.find_spec("triton") is None:
        for name, module in _stub_triton().items():
            monkeypatch.setitem(sys.modules, name, module)
    solution = load_source(source, f"kgate_triton_solution_{path.stem}", str(path))
    problem = load_problem(problem_path, small=True)
    reference = make_model(problem, "Model", torch.float32)
    try:
        candidate = solution.ModelNew(*problem.get_init_inputs())
    except (RuntimeError, AssertionError) as err:  # pragma: no cover - needs a GPU
        if "cuda" in str(err).lower():
            pytest.skip(f"ModelNew needs a GPU to construct: {err}")
        raise
    want = {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in candidate.state_dict().items()}
    assert got == want



# Triton's interpreter (TRITON_INTERPRET=1) runs the kernels on CPU, but only when the
# variable is set before triton is first imported (its standard library, tl.sum and
# friends, is decorated at import). So all solutions run in one fresh subprocess,
# which prints one JSON object: "level/name:path" -> "ok" | "skip: why" | error.

INTERPRETER_PATHS = ("fused", "looped")


def _interpreter_case(path: Path, long_rows: bool) -> str:
    solution = load_source(path.read_text(), f"kgate_triton_interp_{path.stem}", str(path))
    if long_rows:
        if not hasattr(solution, "MAX_FUSED_COLS"):
            return "skip: no long-row path"
        # Module globals, read at call time (the interpreter re-reads kernel source
        # from the file by line number, so the source itself is not rewritten).
        solution.MAX_FUSED_COLS = 64
        solution.LOOP_BLOCK_SIZE = 128
    problem = load_problem(problem_for(path), small=True)
    for dtype in (torch.float32, torch.float64):
        reference = make_model(problem, "Model", dtype)
        candidate = solution.ModelNew(*problem.get_init_inputs()).to(dtype)
        candidate.load_state_dict(reference.state_dict(), strict=True)
        inputs = make_inputs(problem, 0, dtype, flip_signs=True)
        with torch.no_grad():
            expected = reference(*[x.clone() for x in inputs])
            got = candidate(*[x.clone() for x in inputs])
        tol = SOLUTION_TOL if dtype == torch.float32 else 1e-10
        torch.testing.assert_close(got, expected, atol=tol, rtol=tol)
    return "ok"


def _interpreter_main() -> None:
    import traceback
    assert os.environ.get("TRITON_INTERPRET") == "1"
    torch.set_num_threads(1)
    results = {}
    for path in TRITON_SOLUTIONS:
        for kind in INTERPRETER_PATHS:
            try:
                results[f"{solution_id(path)}:{kind}"] = _interpreter_case(path, kind == "looped")
            except Exception:  # reported per case by the test below
                results[f"{solution_id(path)}:{kind}"] = traceback.format_exc(limit=-3)
    print(json.dumps(results))


@pytest.fixture(scope="module")
def interpreter_results() -> dict[str, str]:
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "import test_suite_problems as t; t._interpreter_main()")
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", INTERPRETER_PATHS)
@pytest.mark.parametrize("path", TRITON_SOLUTIONS, ids=[solution_id(p) for p in TRITON_SOLUTIONS])
def test_triton_solution_matches_in_interpreter(path, kind, interpreter_results):
    """Small sizes, float32 and float64, sign-flipped inputs; "looped" shrinks
    MAX_FUSED_COLS so row kernels take their long-row path too."""
    result = interpreter_results[f"{solution_id(path)}:{kind}"]
    if result.startswith("skip:"):
        pytest.skip(result)
    assert result == "ok", result
