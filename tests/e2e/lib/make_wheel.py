"""Writes a pure-Python wheel by hand (PEP 427), stdlib only.

usage: make_wheel.py OUTDIR DIST_NAME VERSION MODULE_FILE [SCRIPT_NAME]

The wheel holds one module (MODULE_FILE, imported under its file name) and a
console script SCRIPT_NAME (default: DIST_NAME) = module:main. Prints the
wheel's file name. No setuptools, no network: the e2e tests' local index.
"""
import base64
import hashlib
import os
import sys
import zipfile


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main():
    outdir, dist, version, module_file = sys.argv[1:5]
    script = sys.argv[5] if len(sys.argv) > 5 else dist
    escaped = dist.replace("-", "_").replace(".", "_")
    module = os.path.splitext(os.path.basename(module_file))[0]
    info = f"{escaped}-{version}.dist-info"
    files = {
        f"{module}.py": open(module_file, "rb").read(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: make_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\n{script} = {module}:main\n".encode(),
    }
    name = f"{escaped}-{version}-py3-none-any.whl"
    lines = [record_line(p, d) for p, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(lines) + "\n").encode()
    with zipfile.ZipFile(os.path.join(outdir, name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    print(name)


main()
