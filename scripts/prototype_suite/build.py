"""Build the prototype's programs as its Makefile does, with what Debian's GCC 12 needs.

Added to the Makefile's flags (docs/compat.md, "Building the prototype's programs"):
`--specs=picolibc.specs` for the C headers, `-fno-tree-loop-distribute-patterns` so that
the runtime's memset is not compiled into a call to itself, `-fno-tree-sink` for the
runtime's syscalls.c so that a finished thread is marked exited, and for C++ sw/cxx's headers
and runtime, linked with gcc (Debian ships no libstdc++ for riscv64-unknown-elf).
"""
import glob
import os
import subprocess

GCC = "riscv64-unknown-elf-gcc"
GXX = "riscv64-unknown-elf-g++"
MODERN = ["--specs=picolibc.specs", "-fno-tree-loop-distribute-patterns"]
# The prototype's Makefile: CFLAGS and CPPFLAGS.
CFLAGS = ["-mcmodel=medany", "-std=gnu99", "-O2", "-fno-common", "-fno-builtin-printf",
          "-Wall", "-ffixed-x30", "-ffixed-x31", "-fno-use-cxa-atexit"]
CPPFLAGS = ["-mcmodel=medany", "-Wall", "-Wextra", "-pedantic", "-O2", "-ffixed-x30",
            "-ffixed-x31", "-fno-common", "-fno-builtin-printf", "-Wno-unused-function",
            "-fno-exceptions", "-std=c++11"]
# What a freestanding C++ build adds (sw/cxx/README.md).
CXX_EXTRA = ["-fno-rtti", "-fno-threadsafe-statics"]
RUNTIME = ("crt", "syscalls")
# The runtime's app_wrapper stores `thread_exited[cid][context_id] = true` (a plain array,
# no barrier) and then, for a context other than 0, loops on lnic_idle() forever; GCC 12's
# store sinking (-ftree-sink) moves the store into the other branch, so no such thread is
# ever marked exited and context 0's join never ends.
RUNTIME_EXTRA = ["-fno-tree-sink"]


def build_all(src, scratch, cxx_dir, only):
    """Every program of `src` (each .c and .cc but the runtime): name -> (elf, why not)."""
    out = os.path.join(scratch, "build")
    os.makedirs(out, exist_ok=True)
    names = sorted(p for p in glob.glob(os.path.join(src, "*.c")) + glob.glob(os.path.join(src, "*.cc"))
                   if os.path.splitext(os.path.basename(p))[0] not in RUNTIME)
    if only:
        names = [p for p in names if os.path.splitext(os.path.basename(p))[0] in only]
    runtime, why = build_runtime(src, out, cxx_dir)
    built = {}
    for path in names:
        name = os.path.splitext(os.path.basename(path))[0]
        built[name] = (None, why) if runtime is None else build_one(path, src, out, runtime, cxx_dir)
    return built


def build_runtime(src, out, cxx_dir):
    """crt.o, syscalls.o and sw/cxx's cxxrt.o, or None and the compiler's first error."""
    c = [GCC, *MODERN, *CFLAGS, "-I", src]
    steps = [
        ([*c, "-D__ASSEMBLY__=1", "-c", os.path.join(src, "crt.S")], "crt.o"),
        ([*c, *RUNTIME_EXTRA, "-c", os.path.join(src, "syscalls.c")], "syscalls.o"),
        ([GXX, *MODERN, *CPPFLAGS, *CXX_EXTRA, "-isystem", os.path.join(cxx_dir, "include"),
          "-c", os.path.join(cxx_dir, "cxxrt.cc")], "cxxrt.o"),
    ]
    for cmd, obj in steps:
        error = compile_step([*cmd, "-o", os.path.join(out, obj)])
        if error:
            return None, f"runtime {obj}: {error}"
    return {obj: os.path.join(out, obj) for _, obj in steps}, None


def build_one(path, src, out, runtime, cxx_dir):
    name, ext = os.path.splitext(os.path.basename(path))
    obj, elf = os.path.join(out, name + ".o"), os.path.join(out, name + ".riscv")
    if ext == ".c":
        cmd = [GCC, *MODERN, *CFLAGS, "-I", src, "-c", path, "-o", obj]
        extra, libc = [], ["-nostdlib"]
    else:
        cmd = [GXX, *MODERN, *CPPFLAGS, *CXX_EXTRA, "-isystem", os.path.join(cxx_dir, "include"),
               "-I", src, "-c", path, "-o", obj]
        extra, libc = [runtime["cxxrt.o"]], []  # malloc and __libc_init_array: picolibc's
    error = compile_step(cmd) or compile_step(
        [GCC, "--specs=picolibc.specs", "-T", os.path.join(src, "link.ld"), "-static", *libc,
         "-nostartfiles", obj, runtime["crt.o"], runtime["syscalls.o"], *extra, "-lgcc", "-o", elf])
    return (None, error) if error else (elf, None)


def compile_step(cmd):
    """None, or the first error line the compiler or linker printed."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 0:
        return None
    lines = [l for l in done.stderr.splitlines() if "error" in l.lower()] or done.stderr.splitlines() or ["failed"]
    return shorten(lines[0])


def shorten(line):
    """The compiler's message without the scratch or source directory."""
    for marker in ("fatal error: ", "error: "):
        if marker in line:
            head = os.path.basename(line.split(":", 1)[0])
            return f"{head}: {marker}{line.split(marker, 1)[1]}"
    return line.strip()
