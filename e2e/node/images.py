"""The node tier's images, built locally: docker-archive tars for `ctr images import`.

- LEASEHOLD: scripts/image.sh's (the one e2e_ship_image builds and smoke-tests, a requirement
  of the node fixture), exported with `buildah push ... docker-archive:` (keeps the tag).
- PAUSE, APP: the pod sandbox and the test's app (images/pause.c, lhapp.c), static, FROM scratch.
- OPERATOR: e2e/crmanager's controller-runtime manager (static Go, cached by its build.sh), the
  observe scenarios' `app`; its identity, <hostname>_<uuid>, starts with the pod's name.

    python3 -m e2e.node.images OUTDIR      # writes OUTDIR/{pause,lhapp,crmanager,leasehold}.tar
"""

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PAUSE = "leasehold.local/pause:1"
APP = "leasehold.local/lhapp:1"
OPERATOR = "leasehold.local/crmanager:1"
LEASEHOLD = "leasehold.local/leasehold:dev"
BUILDAH_IMAGE = os.environ.get("LEASEHOLD_IMAGE", "localhost/leasehold:dev")


def _static_binary(src, out):
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(out),
                    str(src)], check=True)
    subprocess.run(["strip", str(out)], check=True)


def _tar_bytes(members):
    """members: [(path, bytes, mode)] -> an uncompressed, reproducible layer tar."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for path, data, mode in members:
            if "/" in path and not any(m[0] == path.rsplit("/", 1)[0] for m in members):
                d = tarfile.TarInfo(path.rsplit("/", 1)[0])
                d.type, d.mode, d.mtime = tarfile.DIRTYPE, 0o755, 0
                t.addfile(d)
            ti = tarfile.TarInfo(path)
            ti.size, ti.mode, ti.mtime, ti.uid, ti.gid = len(data), mode, 0, 0, 0
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def docker_archive(out, tag, files, entrypoint, user="65532:65532"):
    """Writes a one-layer docker-archive `out` holding `files` [(path, bytes, mode)]."""
    layer = _tar_bytes(files)
    layer_sha = hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
        "config": {"Entrypoint": entrypoint, "User": user, "Env": ["PATH=/"]},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{layer_sha}"]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "e2e/node/images.py"}],
    }, sort_keys=True).encode()
    config_sha = hashlib.sha256(config).hexdigest()
    manifest = json.dumps([{"Config": f"{config_sha}.json", "RepoTags": [tag],
                            "Layers": [f"{layer_sha}/layer.tar"]}]).encode()
    Path(out).write_bytes(_tar_bytes([
        (f"{layer_sha}/layer.tar", layer, 0o644), (f"{config_sha}.json", config, 0o644),
        ("manifest.json", manifest, 0o644)]))


def busybox_static(tmp):
    """Debian's busybox-static (downloaded, not installed), for the distroless debug image's
    /busybox/sh, which the classic overlay's preStop hook runs."""
    subprocess.run(["apt-get", "download", "-qq", "busybox-static"], cwd=tmp, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deb = next(Path(tmp).glob("busybox-static_*.deb"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(Path(tmp) / "bb")], check=True)
    return (Path(tmp) / "bb" / "bin" / "busybox").read_bytes()


def build_local(outdir):
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        bins = {}
        for name in ("pause", "lhapp"):
            b = Path(tmp) / name
            _static_binary(HERE / "images" / f"{name}.c", b)
            bins[name] = b.read_bytes()
        docker_archive(outdir / "pause.tar", PAUSE, [("pause", bins["pause"], 0o755)], ["/pause"])
        # busybox runs its applets itself (sh, wget, sleep, touch): one file, named sh.
        docker_archive(outdir / "lhapp.tar", APP,
                       [("lhapp", bins["lhapp"], 0o755), ("busybox/sh", busybox_static(tmp), 0o755)],
                       ["/lhapp"])


def build_operator(outdir):
    """The controller-runtime manager's image. build.sh does nothing when its cached binary was
    built from the same sources (the e2e_crmanager fixture builds it first under CTest)."""
    r = subprocess.run(["bash", str(REPO / "e2e" / "crmanager" / "build.sh")], check=True,
                       stdout=subprocess.PIPE, text=True)
    binary = Path(r.stdout.strip().splitlines()[-1]) / "crmanager"
    docker_archive(Path(outdir) / "crmanager.tar", OPERATOR,
                   [("crmanager", binary.read_bytes(), 0o755)], ["/crmanager"])


def export_leasehold(outdir):
    """The image e2e_ship_image built (scripts/image.sh build when it is missing)."""
    bah = ["buildah", "--storage-driver", "vfs"]
    if subprocess.run(bah + ["inspect", "--type", "image", BUILDAH_IMAGE],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["bash", str(REPO / "scripts" / "image.sh"), "build"], check=True)
    out = Path(outdir) / "leasehold.tar"
    out.unlink(missing_ok=True)
    subprocess.run(bah + ["push", "--quiet", BUILDAH_IMAGE, f"docker-archive:{out}:{LEASEHOLD}"],
                   check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    build_local(sys.argv[1])
    if "--no-leasehold" not in sys.argv:  # the teardown test runs pause and lhapp only
        build_operator(sys.argv[1])
        export_leasehold(sys.argv[1])
