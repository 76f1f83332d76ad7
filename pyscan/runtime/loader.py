"""The kernels of kernels/, compiled at run time by pycuda, loaded by cuda.core, launched by pyscan's launcher.

    fn = get_kernel("scan/kogge_stone.cu", "kogge_stone_scan", SECTION_SIZE=1024, ELEM_TYPE="float")
    fn.prepared_async_call(grid, block, stream, out.gpudata, x.gpudata, n)     # PyCUDA's spelling

Keyword arguments become `#define`s before the file (an int, a C type name, or a Macro: C text pyscan made and checked,
such as a custom operator's expression), local `#include`s are inlined with `#line` markers, pycuda's
`compile()` (SourceModule's nvcc call and disk cache) makes the cubin, cuda.core loads it, and the argument types are
read off the `__global__` signature as pycuda's prepare() takes them (docs/runtime.md, "Kernels").
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ExpressionCompileError, KernelCompileError
from . import driver

COMPILE_OPTIONS = ("-std=c++17",)

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TYPE_VALUE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*( [A-Za-z_][A-Za-z0-9_]*)*$")
_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*(//.*)?$')  # a trailing // comment allowed
_PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\s*$")
_BOUNDS = r"(?:__launch_bounds__\s*\([^)]*\)\s*)?"
_GLOBAL_RE = re.compile(r"__global__\s+" + _BOUNDS + r"void\s+" + _BOUNDS + r"(\w+)\s*\(")
_DEFINE_RE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(.+?)\s*$", re.MULTILINE)


def _find_kernel_root() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "kernels", here.parent / "kernels"):  # installed package; source checkout
        if candidate.is_dir() and any(candidate.rglob("*.cu")):
            return candidate
    return here.parent / "kernels"


KERNEL_ROOT = _find_kernel_root()


def kernel_files() -> list[str]:
    """Every kernel file the loader sees, as paths relative to kernels/ ("scan/kogge_stone.cu", ...)."""
    return sorted(p.relative_to(KERNEL_ROOT).as_posix() for p in KERNEL_ROOT.rglob("*.cu"))


def kernel_path(relpath: str) -> Path:
    """kernels/relpath, or relpath itself where it is an absolute path (a .cu file of one's own, e.g. an exercise)."""
    path = (KERNEL_ROOT / relpath).resolve()  # an absolute relpath replaces KERNEL_ROOT
    if not path.is_file() or path.suffix != ".cu":
        listing = "\n  ".join(kernel_files())
        raise FileNotFoundError(f"no kernel file {relpath!r} under {KERNEL_ROOT}; the kernel files are:\n  {listing}")
    return path


def _expand(path: Path, seen: set[Path]) -> list[str]:
    """The file's lines with its local includes inlined (once each, like #pragma once) and #line markers."""
    out = [f'#line 1 "{path}"']
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        include = _INCLUDE_RE.match(line)
        if include:
            target = (path.parent / include.group(1)).resolve()
            if not target.is_file():
                raise FileNotFoundError(f"{path}:{number}: included file {include.group(1)!r} not found")
            if target not in seen:
                seen.add(target)
                out.extend(_expand(target, seen))
            out.append(f'#line {number + 1} "{path}"')
        elif _PRAGMA_ONCE_RE.match(line):
            out.append("")
        else:
            out.append(line)
    return out


@dataclass(frozen=True)
class Macro:
    """A #define whose value is C text that pyscan made and checked (pyscan.expressions: a custom operator's
    expression, a map, a literal), put in as it is: `#define NAME(params) (text)`, or `#define NAME (text)` without
    params.  `shown` is what a compile error quotes: the expression as the caller wrote it (op='a % b')."""

    text: str
    params: tuple = ()
    shown: str = field(default="", compare=False)

    def line(self, name: str) -> str:
        for bad in ("\n", "\r", "\\", "#", '"', "'", "//", "/*", ";", "{", "}"):
            if bad in self.text:  # pyscan.expressions never writes these: a second check, at the compiler's door
                raise ValueError(f"macro {name}: {bad!r} in {self.text!r}")
        if not all(_NAME_RE.match(p) for p in self.params):
            raise ValueError(f"macro {name}: parameters {self.params!r} are not C identifiers")
        head = f"{name}({', '.join(self.params)})" if self.params else name
        return f"#define {head} ({self.text})"


def _define_lines(defines: dict) -> list[str]:
    if "T" in defines:
        # T= is accepted for the element type, as students write it, but injected as ELEM_TYPE: a macro named T
        # would rewrite every `template <typename T>` in CUDA's own headers.
        if "ELEM_TYPE" in defines:
            raise ValueError("give the element type once: T= and ELEM_TYPE= are the same macro")
        defines = {("ELEM_TYPE" if k == "T" else k): v for k, v in defines.items()}
    lines = []
    for name, value in sorted(defines.items()):
        if not _NAME_RE.match(name):
            raise ValueError(f"invalid macro name {name!r}: expected a C identifier")
        if isinstance(value, Macro):
            lines.append(value.line(name))
            continue
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"macro {name}: expected an int or a C type name, got {type(value).__name__} {value!r}")
        if isinstance(value, str) and not _TYPE_VALUE_RE.match(value):
            raise ValueError(f"macro {name}: {value!r} is not a C type name or identifier")
        lines.append(f"#define {name} {value}")
    return lines


def _build(relpath: str, defines: dict) -> tuple[str, frozenset]:
    """(the source SourceModule compiles, the files it was read from)."""
    path = kernel_path(relpath)
    files = {path}
    source = "\n".join(_define_lines(defines) + _expand(path, files)) + "\n"
    return source, frozenset(files)


def build_source(relpath: str, **defines) -> str:
    """The source SourceModule compiles: the #defines, then the file with its includes inlined."""
    return _build(relpath, defines)[0]


def global_functions(source: str) -> list[str]:
    return _GLOBAL_RE.findall(source)


# Argument-type letters of Python's struct module, which pycuda's prepare() takes.
_C_TYPE_CODES = {
    "int": "i", "signed int": "i", "int32_t": "i", "unsigned": "I", "unsigned int": "I", "uint32_t": "I",
    "long long": "q", "long long int": "q", "int64_t": "q", "unsigned long long": "Q",
    "unsigned long long int": "Q", "uint64_t": "Q", "size_t": "Q", "long": "q", "unsigned long": "Q",
    "short": "h", "unsigned short": "H", "char": "b", "signed char": "b", "unsigned char": "B",
    "uint8_t": "B", "float": "f", "double": "d", "bool": "?",
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "__grid_constant__", "struct"}


def _macro_table(source: str) -> dict:
    table = {}
    for name, value in _DEFINE_RE.findall(source):
        table.setdefault(name, value)  # the injected #define comes first and wins over the #ifndef default
    return table


def signature(source: str, function: str) -> str:
    """The prepare() argument string of `function`, read off its declaration in `source`."""
    match = re.search(r"__global__[^;{]*?\b" + re.escape(function) + r"\s*\(", source)
    if not match:
        raise AttributeError(function)
    depth, start = 1, match.end()
    end = start
    while depth:
        depth += {"(": 1, ")": -1}.get(source[end], 0)
        end += 1
    params = source[start:end - 1].strip()
    if params in ("", "void"):
        return ""
    macros, aliases = _macro_table(source), dict(re.findall(r"\busing\s+(\w+)\s*=\s*(\w[\w ]*?)\s*;", source))
    codes = []
    for param in params.split(","):
        if "*" in param or "[" in param:
            codes.append("P")
            continue
        words = [w for w in param.split() if w not in _QUALIFIERS][:-1]  # drop qualifiers and the name
        type_name = " ".join(words)
        for _ in range(8):  # resolve `T` -> ELEM_TYPE -> "float"
            resolved = aliases.get(type_name) or macros.get(type_name)
            if not resolved:
                break
            type_name = resolved
        if type_name not in _C_TYPE_CODES:
            raise TypeError(f"{function}: cannot map parameter {param.strip()!r} (type {type_name!r}) to a prepare() code")
        codes.append(_C_TYPE_CODES[type_name])
    return "".join(codes)


_cache: dict = {}  # ("module", source, options, arch) -> cuda.core ObjectCode; ("function", ...) -> _Entry
_cache_lock = threading.Lock()
# A cached function is checked against its files' modification times at most this often (seconds): a kernel file
# edited in a running session (a notebook, say) is compiled again, and a hot loop of calls costs no stat() each.
SOURCE_CHECK_INTERVAL = 1.0


def _stamps(files) -> tuple:
    return tuple(sorted((str(f), f.stat().st_mtime_ns) for f in files))


def compile_error(relpath, defines, exc):
    """The error for nvcc's refusal of a build: nvcc's log, after the caller's expressions where the build has
    some (ExpressionCompileError: a custom operator or map that parses but does not compile for the dtype)."""
    log = getattr(exc, "stderr", None) or getattr(exc, "stdout", None) or str(exc)
    shown = [v.shown for v in defines.values() if isinstance(v, Macro) and v.shown]
    if shown:
        types = ", ".join(f"{k}={defines[k]}" for k in ("IN_TYPE", "VALUE_TYPE", "ELEM_TYPE") if k in defines)
        return ExpressionCompileError(f"nvcc could not compile {', '.join(shown)} ({types}) in "
                                      f"{_shown(relpath)}; nvcc says:\n{log}")
    return KernelCompileError(f"nvcc could not compile {_shown(relpath)} with {defines}:\n{log}")


def _shown(relpath: str) -> str:
    return relpath if Path(relpath).is_absolute() else f"kernels/{relpath}"


# pycuda's compile() keys its disk cache on the source, and where the text holds "#include" it first runs nvcc's
# preprocessor over it and keys on the output instead (about 0.1-0.2 s a build on a 2-core machine, paid at a build's
# first use in every process, cache hit or not: benchmarks/compile_cache_key.txt), so that a changed header changes
# the key.  The loader has inlined every local header already, and the <...> ones are the toolkit's (cuda_fp16.h,
# cuda/std/...: the kernels include no others), which change only with nvcc, whose --version is in the key: so they
# go to pycuda spelled "# include" -- the same directive, the same cubin -- and it keys on the text itself.
_TOOLKIT_INCLUDE_RE = re.compile(r"^(\s*)#\s*include(\s*<)", re.MULTILINE)


def keyed_as_written(source: str) -> str:
    """`source` as _cubin hands it to pycuda's compile(): the toolkit's #include lines spelled "# include"."""
    return _TOOLKIT_INCLUDE_RE.sub(r"\1# include\2", source)


def _cubin(relpath: str, source: str, options: tuple, arch: str, defines: dict) -> bytes:
    """nvcc's cubin for `source`, through pycuda's compile() (SourceModule's nvcc call and disk cache)."""
    driver.ready()
    import pycuda.driver as drv
    from pycuda.compiler import compile as nvcc_compile

    try:
        return nvcc_compile(keyed_as_written(source), options=list(options), no_extern_c=True, arch=arch)
    except drv.CompileError as exc:
        raise compile_error(relpath, defines, exc) from None


# launch_raw(context, function, stream, geometry, letters, *args) -> CUresult: pyscan/runtime/_launch.c's launch,
# built by setup.py (where it is not, driver.ready() says so before any launch).  Plans call it with everything
# ready (a prepared call) and Kernel.launch_typed only where it returned an error, to raise with the details.
try:
    from ._launch import launch as launch_raw
except ImportError:
    launch_raw = None



def launch_path() -> str:
    """How kernels are launched in this process (`python -m pyscan info` prints it)."""
    if launch_raw is None:
        return "none: the launcher pyscan/runtime/_launch.c is not built (`pip install -e .` builds it)"
    return "cuLaunchKernel from C (pyscan.runtime._launch), kernels loaded by cuda.core"


_INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT


class Kernel:
    """A compiled `__global__` function with its argument types (pycuda's prepared-function interface):
    `prepared_async_call(grid, block, stream, *args, shared_size=0)` launches it on `stream` (a handle or any stream
    object pyscan takes); `prepared_call(...)` on the legacy default stream, as pycuda's does.  Plans keep a
    geometry (`config()`) and call `launch_typed()` with it."""

    __slots__ = ("name", "kernel", "function", "arg_types", "_configs", "__weakref__")

    def __init__(self, name: str, kernel, arg_types: str):
        self.name, self.kernel, self.arg_types = name, kernel, arg_types
        self.function = int(kernel.handle)  # a CUkernel: cuLaunchKernel launches it in the current context
        self._configs: dict = {}  # (grid, block, shared) -> geometry tuple

    def prepared_call(self, grid, block, *args, shared_size: int = 0):
        self.launch(0, grid, block, args, shared_size)

    def prepared_async_call(self, grid, block, stream, *args, shared_size: int = 0):
        self.launch(stream if type(stream) is int else driver.handle_of(stream), grid, block, args, shared_size)

    def launch(self, handle: int, grid, block, args, shared_size: int = 0):
        """One launch on stream `handle` in the current context."""
        self.launch_typed(0, handle, self.config(grid, block, shared_size), *args)

    def launch_typed(self, context: int, handle: int, geometry: tuple, *args):
        """One launch in `context` (a primary context's handle, driver.primary(); 0: the thread's current one) on
        stream `handle`, with a geometry from config(): a plan's launch, with nothing looked up."""
        try:
            code = launch_raw(context, self.function, handle, geometry, self.arg_types, *args)
        except TypeError as exc:
            raise TypeError(f"{self.name}: {exc}") from None
        if code == _INVALID_CONTEXT and not context and not driver.current_context():
            # a thread outside any call: NumPy input's device, then again
            return self.launch_typed(driver.primary(driver.default_device()), handle, geometry, *args)
        if code:
            _, cu = driver.ready()
            raise RuntimeError(f"launch of {self.name} (grid {geometry[:3]}, block {geometry[3:6]}, {geometry[6]} "
                               f"bytes of shared memory, stream {handle:#x}) failed: {cu.CUresult(code).name} ({code})")

    def config(self, grid, block, shared_size: int = 0) -> tuple:
        """The geometry (grid x, y, z, block x, y, z, shared bytes) of a launch, made once."""
        return self._configs.get((grid, block, shared_size)) or self._config(grid, block, shared_size)

    def _config(self, grid, block, shared_size):
        def dims(value):
            value = tuple(value) if not isinstance(value, int) else (value,)
            return tuple(int(v) for v in value) + (1,) * (3 - len(value))

        geometry = dims(grid) + dims(block) + (int(shared_size),)
        if len(self._configs) < 4096:
            self._configs[(grid, block, shared_size)] = geometry
        return geometry

    @property
    def num_regs(self) -> int:
        return self.kernel.attributes.num_regs

    def max_active_blocks(self, block: int, shared_size: int = 0) -> int:
        """Blocks of `block` threads an SM runs at once (the occupancy calculator, on the current device)."""
        return self.kernel.occupancy.max_active_blocks_per_multiprocessor(block, shared_size)

    def set_max_dynamic_shared(self, nbytes: int) -> None:
        """Let a launch ask for nbytes of dynamic shared memory (past 48 KB a kernel must opt in)."""
        _, cu = driver.ready()
        attribute = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        for ordinal in range(driver.device_count()):
            driver._check(cu.cuKernelSetAttribute(attribute, nbytes, self.kernel.handle, cu.CUdevice(ordinal)),
                          "cuKernelSetAttribute")

    def __repr__(self):
        return f"<pyscan Kernel {self.name}({self.arg_types})>"


def add_compile_options(*options: str) -> None:
    """Compile every kernel built from now on with these nvcc options too (e.g. "-lineinfo" for the sanitizer)."""
    global COMPILE_OPTIONS
    COMPILE_OPTIONS = tuple(COMPILE_OPTIONS) + tuple(o for o in options if o not in COMPILE_OPTIONS)


class _Entry:
    __slots__ = ("kernel", "files", "stamps", "checked")

    def __init__(self, kernel, files, stamps):
        self.kernel, self.files, self.stamps, self.checked = kernel, files, stamps, time.monotonic()


def get_kernel(relpath: str, function: str, *, options: tuple = (), arg_types: str | None = None, device=None,
               **defines) -> Kernel:
    """A prepared kernel of a kernel file, specialised by `defines`, for the architecture of `device` (default: NumPy
    input's device); cached, so calls are cheap (a dict look-up).

    `relpath` is relative to kernels/; unknown files raise FileNotFoundError listing the kernel files, unknown
    functions raise AttributeError listing the file's __global__ functions, and nvcc errors raise
    KernelCompileError with nvcc's log.  `arg_types` overrides the argument types read off the signature.
    """
    arch = driver.architecture(driver.default_device() if device is None else device)
    key = ("function", relpath, function, options, arg_types, tuple(sorted(defines.items())), arch)
    entry = _cache.get(key)
    if entry is not None:
        now = time.monotonic()
        if now - entry.checked < SOURCE_CHECK_INTERVAL:
            return entry.kernel
        entry.checked = now
        if _stamps(entry.files) == entry.stamps:
            return entry.kernel
    source, files = _build(relpath, defines)
    stamps = _stamps(files)
    functions = global_functions(source)
    if function not in functions:
        raise AttributeError(f"{_shown(relpath)} has no __global__ function {function!r}; it has: {', '.join(functions)}")
    all_options = tuple(COMPILE_OPTIONS) + tuple(options)
    image = _cubin(relpath, source, all_options, arch, defines)
    with _cache_lock:
        module_key = ("module", source, all_options, arch)
        module = _cache.get(module_key)
        if module is None:
            module = _cache[module_key] = driver._core.ObjectCode.from_cubin(image)
        kernel = Kernel(function, module.get_kernel(function),
                        arg_types if arg_types is not None else signature(source, function))
        _cache[key] = _Entry(kernel, files, stamps)
    return kernel


def loaded_kernel_files() -> list:
    """The kernel files this process has compiled and prepared a function of (relative to kernels/), sorted."""
    return sorted({key[1] for key in _cache if isinstance(key, tuple) and len(key) > 1 and key[0] == "function"})


def cache_size() -> int:
    """How many modules and functions the in-process cache holds (for tests of the cache)."""
    return len(_cache)
