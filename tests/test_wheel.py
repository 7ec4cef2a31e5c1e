"""The wheel carries rules/ and vault-template/: install it into a fresh venv and use it."""

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_and_checks_the_starter_vault(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next(dist.glob("vaultkit_lint-*.whl"))  # the distribution name (vaultkit-lint)

    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    assert "vaultkit/_data/rules/openclaw.yaml" in names
    assert "vaultkit/_data/vault-template/MEMORY.md" in names
    assert any(n.startswith("vaultkit/_data/vault-template/.obsidian/") for n in names)

    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run([str(bin_dir / "pip"), "install", "--quiet", str(wheel)], check=True,
                   capture_output=True)
    demo = tmp_path / "demo"
    # run from an unrelated folder so nothing can come from the source checkout
    init = subprocess.run([str(bin_dir / "vaultkit"), "init", str(demo)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    check = subprocess.run([str(bin_dir / "vaultkit"), "check", str(demo)], cwd=tmp_path,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All checks passed!" in check.stdout
    where = subprocess.run([str(bin_dir / "python"), "-c",
                            "import vaultkit.core.resources as r; print(r.rules_dir())"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert str(env_dir) in where.stdout
