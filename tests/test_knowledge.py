"""The knowledge base machinery on a small temporary knowledge base: front matter validation, the
generated index, link and path checks, index-guided deep search, grep and code following."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelevolve.knowledge.check import static_problems
from kernelevolve.knowledge.documents import load_documents
from kernelevolve.knowledge.index import render_index, write_index
from kernelevolve.knowledge.search import follow_code, grep, rank, select


def doc(hardware: str, bottleneck: str, phase: str, summary: str, body: str) -> str:
    return (f"---\ntitle: {summary.split('.')[0]}\nhardware: [{hardware}]\nbottleneck: [{bottleneck}]\n"
            f"phase: [{phase}]\nsummary: {summary}\n---\n{body}\n")


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "guidance").mkdir(parents=True)
    (root / "hardware" / "amd" / "optimization").mkdir(parents=True)
    (root / "hardware" / "nvidia" / "arch").mkdir(parents=True)
    (root / "code_samples").mkdir()
    (root / "guidance" / "fusion.md").write_text(doc(
        "any", "memory", "optimize", "Fuse elementwise work into the reduction.",
        "# Fusion\n\nFuse the bias add into the reduction so the tensor is read once.\n\n"
        "Launch count matters for small inputs; see [tuning](../hardware/amd/optimization/waves.md).\n\n"
        "The static checker is in `evaluators/static_checks.py`."))
    (root / "hardware" / "amd" / "optimization" / "waves.md").write_text(doc(
        "amd, mi300x", "occupancy", "optimize", "waves_per_eu trades registers for occupancy.",
        "# waves_per_eu\n\nSet waves_per_eu=2 in triton.Config to cap VGPR use per wavefront.\n"))
    (root / "hardware" / "nvidia" / "arch" / "tma.md").write_text(doc(
        "nvidia, h100", "memory", "optimize", "TMA descriptors move tiles without address math.",
        "# TMA\n\nUse tl.make_tensor_descriptor for tiles of a row-major matrix on Hopper.\n"))
    return root


def test_index_is_generated_and_checked(kb: Path) -> None:
    docs, problems = load_documents(kb)
    assert problems == [] and len(docs) == 3
    assert "index.md is stale: run 'ke kb index'" in static_problems(kb)[1]
    assert write_index(kb, docs) is True and write_index(kb, docs) is False
    text = (kb / "index.md").read_text()
    assert text == render_index(docs)
    assert "- [Fuse elementwise work into the reduction](guidance/fusion.md): Fuse" in text
    assert text.index("## guidance/") < text.index("## hardware/amd/optimization/")
    assert static_problems(kb)[1] == []


def test_bad_front_matter_links_and_paths_are_reported(kb: Path) -> None:
    (kb / "guidance" / "bad.md").write_text(doc("tpu", "memory", "optimize", "x.", "body"))
    (kb / "guidance" / "worse.md").write_text(doc("any", "speed", "optimize", "x.", "body"))
    (kb / "guidance" / "links.md").write_text(doc("any", "memory", "debug", "Links.",
                                                  "[gone](missing.md) and `evaluators/nope.py`"))
    (kb / "guidance" / "none.md").write_text("# no front matter\n")
    docs, problems = static_problems(kb)
    text = "\n".join(problems)
    assert "guidance/bad.md: unknown hardware ['tpu']" in text
    assert "guidance/worse.md: unknown bottleneck ['speed']" in text
    assert "guidance/none.md: no front matter" in text
    assert "guidance/links.md: link missing.md does not resolve" in text
    assert "guidance/links.md: names `evaluators/nope.py`, which does not exist" in text


def test_selection_follows_target_vendor_bottleneck_and_phase(kb: Path) -> None:
    docs, _ = load_documents(kb)
    paths = lambda chosen: sorted(d.path for d, _ in chosen)  # noqa: E731
    assert paths(select(docs, "mi300x", "amd")) == ["guidance/fusion.md", "hardware/amd/optimization/waves.md"]
    assert paths(select(docs, "h100", "nvidia", bottleneck="memory")) == ["guidance/fusion.md",
                                                                          "hardware/nvidia/arch/tma.md"]
    assert paths(select(docs, "h100", "nvidia", phase="debug")) == []


def test_a_meta_target_reads_the_documents_tagged_mtia() -> None:
    """The MTIA target records say vendor ``meta`` while the documents tag the family ``mtia``: a new MTIA
    target (not named in any document) still gets the family's documents, and no other vendor does."""
    from kernelevolve.knowledge.search import hardware_matches

    docs, _ = load_documents(Path(__file__).resolve().parent.parent / "knowledge_base")
    family = [d for d in docs if "mtia" in d.hardware]
    assert family and all(hardware_matches(d, "mtia-v9", "meta") for d in family)
    assert not any(hardware_matches(d, "mi999", "amd") for d in family if "any" not in d.hardware)


def test_ranking_and_code_following(kb: Path) -> None:
    docs, _ = load_documents(kb)
    found = rank(select(docs, "h100", "nvidia"), "tile descriptor hopper", k=3)
    assert found[0].path == "hardware/nvidia/arch/tma.md" and "make_tensor_descriptor" in found[0].excerpt
    fusion = rank(select(docs, None, None), "static checker fuse bias", k=2)
    code = follow_code(fusion, docs, "static checker violation")
    assert code and code[0].path == "evaluators/static_checks.py" and code[0].kind == "code"


def test_grep_gives_context_lines(kb: Path) -> None:
    hits = grep("waves_per_eu=2", [kb], context=1)
    assert len(hits) == 1 and hits[0].path.endswith("hardware/amd/optimization/waves.md")
    assert "triton.Config" in hits[0].text
    assert grep(r"make_\w+_descriptor", [kb], regex=True)[0].line > 0


def test_cli_search_and_bad_input(ke, kb: Path) -> None:
    result = ke("kb", "search", "waves registers occupancy", "--hw", "mi300x", "--kb-dir", str(kb), "--json")
    assert result.returncode == 0, result.stderr
    assert result.json()["results"][0]["path"] == "hardware/amd/optimization/waves.md"
    bad = ke("kb", "search", "x", "--hw", "tpu9", "--kb-dir", str(kb))
    assert bad.returncode == 2 and "unknown hardware target 'tpu9'" in bad.stderr
    bad_re = ke("kb", "search", "(unclosed", "--regex", "--kb-dir", str(kb))
    assert bad_re.returncode == 2 and "bad regular expression" in bad_re.stderr


def test_configured_code_roots_from_env_and_flag(ke, kb: Path, tmp_path: Path) -> None:
    env_root, flag_root = tmp_path / "env_root", tmp_path / "flag_root"
    env_root.mkdir()
    flag_root.mkdir()
    (env_root / "team_softmax.py").write_text("x = 1\n# persistent_softmax_marker in the env root\n")
    (flag_root / "team_norm.md").write_text("# persistent_softmax_marker in the flag root\n")
    result = ke("kb", "search", "persistent_softmax_marker", "--grep", "--kb-dir", str(kb), "--code-root",
                str(flag_root), "--json", env={"KE_CODE_ROOTS": str(env_root)})
    assert result.returncode == 0, result.stderr
    hits = result.json()["results"]
    assert [h["path"] for h in hits] == ["team_softmax.py", "team_norm.md"]  # env roots first, then flags
    assert hits[0]["line"] == 2 and "x = 1" in hits[0]["text"], "context lines come with the hit"
    files = ke("kb", "search", "team_", "--files", "--kb-dir", str(kb), "--json",
               env={"KE_CODE_ROOTS": str(env_root)})
    assert [h["path"] for h in files.json()["results"]] == ["team_softmax.py"]
    missing = tmp_path / "nowhere"
    bad = ke("kb", "search", "x", "--grep", "--kb-dir", str(kb), env={"KE_CODE_ROOTS": str(missing)})
    assert bad.returncode == 2 and f"code root {missing} (from KE_CODE_ROOTS) is not a directory" in bad.stderr
    assert bad.stderr.count("\n") == 1


def test_shipped_knowledge_base_is_consistent() -> None:
    """The real knowledge base: at least 40 documents, valid front matter, index current, links and named
    paths resolve (the code samples are run by `ke kb check` in CI and by test_kb_samples.py)."""
    from kernelevolve.knowledge.samples import kb_root

    docs, problems = static_problems(kb_root())
    assert problems == []
    assert sum(d.kind == "doc" for d in docs) >= 40
    vendors = {h for d in docs for h in d.hardware}
    assert {"nvidia", "amd", "mtia", "any"} <= vendors


def test_shipped_knowledge_base_answers_by_target_and_bottleneck() -> None:
    from kernelevolve.knowledge.samples import kb_root

    docs, _ = load_documents(kb_root())
    mtia = rank(select(docs, "mtia-v3", "mtia", "memory", "optimize"), "sram dram bytes reuse", k=3)
    assert mtia and all(p.path.startswith(("hardware/mtia/", "guidance/", "constraints/")) for p in mtia)
    assert any(p.path.startswith("hardware/mtia/") for p in mtia)
    amd = rank(select(docs, "mi300x", "amd"), "wavefront 64 lanes num_warps", k=3)
    assert amd[0].path.startswith("hardware/amd/")
    assert not any(p.path.startswith("hardware/nvidia/") for p in amd)
