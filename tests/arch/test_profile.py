"""csum/arch/profiles.py and arch_profiles/: loading, schema, aliases, kernel releases, user profiles, wheels."""

import os
import shutil
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

import csum
import csum.schemas
from csum.arch import register
from csum.arch.profiles import parse_profile, reload_profiles

REPO = Path(__file__).resolve().parents[2]
REQUIRED = ["generic", "x86_64", "i386", "arm64", "arm", "riscv64", "powerpc64", "powerpc64le", "s390x",
            "parisc", "loongarch64", "mips"]


def test_required_profiles_exist():
    """design.md: at least these profiles are available by name."""
    assert set(REQUIRED) <= set(csum.profile_names())


@pytest.mark.parametrize("alias,name", [("amd64", "x86_64"), ("AArch64", "arm64"), ("hppa", "parisc"),
                                        ("ppc64le", "powerpc64le")])
def test_aliases(alias, name):
    """Aliases (case-insensitive) resolve to the canonical profile."""
    assert csum.profile(alias).name == name


@pytest.mark.parametrize("kernel,algorithm", [("5.10", "x86_64-kleen"), ("5.16", "x86_64-kleen"),
                                              ("5.17", "x86_64-5.17"), ("6.6", "x86_64-5.17"),
                                              ("6.7", "x86_64"), ("6.18.44", "x86_64")])
def test_x86_64_kernel_selects_implementation(kernel, algorithm):
    """kernel= picks the implementation in force in that release (x86_64: <=5.16, 5.17..6.6, >=6.7)."""
    assert csum.profile("x86_64", kernel=kernel).implementation.algorithm == algorithm


def test_old_x86_64_folds_at_odd_addresses():
    """x86_64 before 6.7 folds and byte-swaps at odd addresses; from 6.7 it does not (vector files x86_64*.txt)."""
    data = b"\xff\xff\xff"
    assert csum.profile("x86_64", kernel="5.10").csum_partial(data, align=1) == 0xFF
    assert csum.profile("x86_64", kernel="5.10").csum_partial(data, align=0) == 0x100FE
    assert csum.profile("x86_64").csum_partial(data, align=1) == 0xFFFFFF


def _toml(name: str, extra: str = "", algorithm: str = "lib/checksum.c-le") -> str:
    return textwrap.dedent(f"""\
        name = "{name}"
        endian = "little"
        word_size = 64
        {extra}
        [[implementation]]
        algorithm = "{algorithm}"
        csum_partial = "lib/checksum.c"
        result = "folded16"
        alignment_sensitive = false
        sources = ["lib/checksum.c"]
        """)


def test_schema_rejects_unknown_keys():
    """A typo in a profile is an error, not silently ignored (conventions: schema rejects unknown keys)."""
    with pytest.raises(ValueError, match="wordsize"):
        parse_profile(_toml("x", 'wordsize = 64'), "x.toml")


def test_schema_rejects_bad_choice():
    with pytest.raises(ValueError, match="endian"):
        parse_profile(_toml("x").replace('"little"', '"middle"'), "x.toml")


def test_profile_with_no_overrides_behaves_like_generic():
    """Conventions 4: a profile with no overrides gives exactly generic's bits."""
    prof = parse_profile(_toml("plain"), "plain.toml")
    for data in (b"", b"\xff", b"\xff\xff\xff\xff", bytes(range(99))):
        assert prof.csum_partial(data, 0xFFFFFFFF) == csum.csum_partial(data, 0xFFFFFFFF)


def test_user_profile_dropped_in_with_new_algorithm(tmp_path, monkeypatch):
    """A user adds an arch: a TOML file in CSUM_PROFILE_PATH plus one registered function."""

    @register("test-sum-bytes")
    def sum_bytes(view, seed, align):
        return (sum(view) + seed) & 0xFFFFFFFF

    (tmp_path / "toy.toml").write_text(_toml("toy", 'aliases = ["toy64"]', "test-sum-bytes"))
    monkeypatch.setenv("CSUM_PROFILE_PATH", str(tmp_path))
    reload_profiles()
    try:
        assert csum.profile("toy64").csum_partial(b"\x01\x02", 3) == 6
    finally:
        monkeypatch.delenv("CSUM_PROFILE_PATH")
        reload_profiles()


def test_profiles_load_when_the_installed_mapping_is_gone(tmp_path, monkeypatch):
    """An editable install whose mapping for csum.arch_profiles points at a removed clone (seen after a CI run from
    another checkout: "unknown profile 'generic' ... known:" with an empty list) still finds the source tree's
    profiles. Expected: the file names under arch_profiles/ of this checkout."""
    from importlib import resources

    monkeypatch.setattr(resources, "files", lambda package: tmp_path / "gone")
    reload_profiles()
    try:
        expected = sorted(p.stem for p in (Path(__file__).parents[2] / "arch_profiles").glob("*.toml"))
        assert sorted(csum.profile_names()) == expected
        assert csum.profile("generic").csum_partial(b"\x01\x02") == 0x0201
    finally:
        monkeypatch.undo()
        reload_profiles()


def test_profiles_load_from_an_installed_wheel(tmp_path):
    """Build a wheel, install it in a fresh venv, load every profile from outside the repository; the man page and
    the bash, zsh and fish completions land under the venv's share/ (where man, bash-completion, zsh's fpath and
    fish look in a prefix), and each is read by its own program where that program is installed; the JSON Schemas
    (csum/schemas/*.json) load from the installed package."""
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"),
                    str(REPO)], check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("*.whl"))
    env_dir = tmp_path / "venv"
    # pip comes from the system site-packages: the venv's own (ensurepip) took 6 of this test's 11 s
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True)
    script = ("import csum, pathlib; names = csum.profile_names(); "
              "assert not pathlib.Path(csum.__file__).is_relative_to(%r), csum.__file__; "
              "[csum.profile(n).csum_partial(b'abc') for n in names]; print(len(names))" % str(REPO))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CSUM_PROFILE_PATH")}
    out = subprocess.run([str(py), "-c", script], check=True, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert int(out.stdout) == len(csum.profile_names())
    # the JSON Schemas are package data, read from the installed package (csum.schemas); verify --explain's package
    schemas = ("from csum import schemas; import csum.explain.causes; "
               "print(sorted(o for o in schemas.VERSIONS if schemas.schema(o)['$id'] == schemas.name(o)))")
    out = subprocess.run([str(py), "-c", schemas], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(sorted(csum.schemas.VERSIONS))
    _installed_share(env_dir / "share")


def _installed_share(share: Path) -> None:
    """The data files of the wheel, installed under ``share``: man(1) renders the page (its NAME line), bash
    registers the completion, zsh parses its function, fish parses its file and completes ``csum ver`` to verify."""
    page = share / "man" / "man1" / "csum.1"
    bash, zsh, fish = (share / "bash-completion" / "completions" / "csum", share / "zsh" / "site-functions" / "_csum",
                       share / "fish" / "vendor_completions.d" / "csum.fish")
    assert all(p.is_file() for p in (page, bash, zsh, fish))
    if shutil.which("man"):
        text = subprocess.run(["man", "-l", "-P", "cat", str(page)], capture_output=True, text=True, check=True,
                              env={**os.environ, "MANWIDTH": "100"}).stdout
        assert "csum - the Internet checksum as each Linux architecture computes it" in text
    done = subprocess.run(["bash", "-c", f"source {bash} && complete -p csum"], capture_output=True, text=True)
    assert done.returncode == 0 and "csum" in done.stdout
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n", str(zsh)], check=True)
    if shutil.which("fish"):
        subprocess.run(["fish", "-n", str(fish)], check=True)
        got = subprocess.run(["fish", "-c", f"source {fish}; complete -C 'csum ver'"], capture_output=True,
                             text=True, check=True).stdout
        assert got.split("\t")[0] == "verify"


def test_riscv_zbb_before_6_8_is_lib_checksum():
    """riscv gained its own do_csum in 6.8 ("riscv: Add checksum library"); 6.7 built lib/checksum.c.

    ff ff: the Zbb fold's sign extension gives 0xffffffff (tests/vectors/csum_partial/riscv64-zbb.txt),
    lib/checksum.c gives 0xffff (tests/vectors/csum_partial/generic.txt).
    """
    assert csum.profile("riscv64-zbb").csum_partial(b"\xff\xff") == 0xFFFFFFFF
    assert csum.profile("riscv64-zbb", kernel="6.7").csum_partial(b"\xff\xff") == 0xFFFF
