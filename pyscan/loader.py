"""Compile the `.cu` files of kernels/ at run time through `pycuda.compiler.SourceModule`.

    fn = get_kernel("scan/kogge_stone.cu", "kogge_stone_scan", SECTION_SIZE=1024, ELEM_TYPE="float")
    fn.prepared_call(grid, block, out.gpudata, x.gpudata, n)

* **Specialisation by #define.**  Keyword arguments become `#define NAME value` lines put before the file;
  each kernel file gives a default for every macro it takes (`#ifndef NAME / #define NAME default`), so it
  also compiles on its own with `nvcc -arch=sm_90 -cubin file.cu`.  Values are ints or C type names.
* **Includes.**  Kernel files include shared headers by relative path (`#include "../common/operators.cuh"`),
  which works for plain nvcc.  SourceModule compiles a string in a temporary folder, so the loader inlines
  those includes itself, with `#line` directives: nvcc's messages name the real `.cu` file and line.
* **Cache.**  Modules in-process on (the expanded source text, options, context); prepared functions on (file,
  function, defines, options, context), checked against the files' modification times (at most once a second),
  so a kernel file edited in a running session is compiled again.  A second call compiles nothing and returns the
  same function.  pycuda's own disk cache (~/.cache/pycuda) stays on, so a new process skips nvcc for kernels
  built before.
* **Prepared functions.**  The argument types are read off the `__global__` signature (pointers -> "P",
  `int` -> "i", `long long` -> "q", the element type as specialised, ...) once; a `Kernel` packs the arguments
  with them and launches on the running call's stream (pyscan.streams), in the context of the call's device.
"""

from __future__ import annotations

import ctypes
import re
import struct
import threading
import time
from pathlib import Path

from . import cuda, gpu, streams
from .errors import KernelCompileError
from .gpu import driver

COMPILE_OPTIONS = ("-std=c++17",)

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TYPE_VALUE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*( [A-Za-z_][A-Za-z0-9_]*)*$")
_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*(//.*)?$')  # a trailing // comment allowed
_PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\s*$")
_BOUNDS = r"(?:__launch_bounds__\s*\([^)]*\)\s*)?"
_GLOBAL_RE = re.compile(r"__global__\s+" + _BOUNDS + r"void\s+" + _BOUNDS + r"(\w+)\s*\(")
_DEFINE_RE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(.+?)\s*$", re.MULTILINE)


def _find_kernel_root() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "kernels", here.parent / "kernels"):  # installed package; source checkout
        if candidate.is_dir() and any(candidate.rglob("*.cu")):
            return candidate
    return here.parent / "kernels"


KERNEL_ROOT = _find_kernel_root()


def kernel_files() -> list[str]:
    """Every kernel file the loader sees, as paths relative to kernels/ ("scan/kogge_stone.cu", ...)."""
    return sorted(p.relative_to(KERNEL_ROOT).as_posix() for p in KERNEL_ROOT.rglob("*.cu"))


def kernel_path(relpath: str) -> Path:
    path = (KERNEL_ROOT / relpath).resolve()
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


_cache: dict = {}  # (source, options, context) -> pycuda module; ("function", ...) -> _Entry
_cache_lock = threading.Lock()
# A cached function is checked against its files' modification times at most this often (seconds): a kernel file
# edited in a running session (a notebook, say) is compiled again, and a hot loop of calls costs no stat() each.
SOURCE_CHECK_INTERVAL = 1.0


def _stamps(files) -> tuple:
    return tuple(sorted((str(f), f.stat().st_mtime_ns) for f in files))


def _release_modules():
    """gpu's release hook: drop the compiled modules while their context is still current."""
    _cache.clear()


def get_module(relpath: str, *, options: tuple = (), **defines):
    """The compiled pycuda SourceModule of a kernel file (for lab scripts that launch through pycuda), cached."""
    drv = driver()
    gpu.at_release(_release_modules)
    source = build_source(relpath, **defines)
    options = tuple(COMPILE_OPTIONS) + tuple(options)
    key = (source, options, cuda.current_context())
    module = _cache.get(key)
    if module is None:
        from pycuda.compiler import SourceModule

        try:
            module = SourceModule(source, options=list(options), no_extern_c=True)
        except drv.CompileError as exc:
            log = exc.stderr or exc.stdout or str(exc)
            raise KernelCompileError(f"nvcc could not compile kernels/{relpath} with {defines}:\n{log}") from None
        _cache[key] = module
    return module, source


def _cubin(relpath: str, source: str, options: tuple, arch: str, defines: dict) -> bytes:
    """nvcc's cubin for `source` (pycuda's compile(): the same on-disk cache SourceModule uses; no context needed)."""
    drv = gpu.pycuda_driver()
    from pycuda.compiler import compile as nvcc_compile

    try:
        return nvcc_compile(source, options=list(options), no_extern_c=True, arch=arch)
    except drv.CompileError as exc:
        log = exc.stderr or exc.stdout or str(exc)
        raise KernelCompileError(f"nvcc could not compile kernels/{relpath} with {defines}:\n{log}") from None


class Kernel:
    """A compiled `__global__` function, prepared once: `prepared_call` launches it on the stream of the call that
    is running in this thread (pyscan.streams; the legacy default stream outside a call).

    The interface is pycuda's prepared function's (`prepared_call(grid, block, *args, shared_size=0)`), so the
    drivers read like PyCUDA code; the launch itself is one cuLaunchKernel with the arguments packed in one buffer
    with C alignment (as pycuda packs them), which is what lets it go to a CuPy or torch stream.  It goes through
    the compiled launch of pyscan.native where that builds (one C call), else through ctypes."""

    __slots__ = ("name", "handle", "arg_types", "_types", "_struct", "_pointer_slots", "context", "__weakref__")

    def __init__(self, name: str, handle: int, arg_types: str, context: int):
        self.name, self.handle, self.arg_types, self.context = name, handle, arg_types, context
        self._types = arg_types.encode()
        self._struct = struct.Struct("@" + arg_types) if arg_types else None
        self._pointer_slots = tuple(i for i, code in enumerate(arg_types) if code == "P")

    def _pack(self, args) -> int:
        """Pack the arguments into this thread's launch buffer; returns their size in bytes."""
        if len(args) != len(self.arg_types):
            raise TypeError(f"{self.name}: expected {len(self.arg_types)} arguments ({self.arg_types}), "
                            f"got {len(args)}")
        if not self._struct:
            return 0
        if self._pointer_slots:
            args = list(args)
            for i in self._pointer_slots:  # a DeviceAllocation, a np.uintp or an int: the address
                args[i] = int(args[i])
        self._struct.pack_into(_launch_buffers().arguments, 0, *args)
        return self._struct.size

    def prepared_call(self, grid, block, *args, shared_size: int = 0):
        self.launch_on(streams.current(), grid, block, args, shared_size)

    def prepared_async_call(self, grid, block, stream, *args, shared_size: int = 0):
        """pycuda's spelling with an explicit stream (any stream pyscan.streams.handle takes)."""
        self.launch_on(streams.handle(stream), grid, block, args, shared_size)

    def launch_on(self, stream: int, grid, block, args, shared_size: int = 0):
        native = _native_launch
        if native is None:
            native = _find_native_launch()
        if native:
            try:
                code = native(self.handle, grid, block, shared_size, stream, self._types, *args)
            except TypeError as exc:
                raise TypeError(f"{self.name}: {exc}") from None
        else:
            code = launch(self.handle, grid, block, self._pack(args), shared_size, stream)
        if code:
            self._failed(code, grid, block, shared_size)

    def _failed(self, code: int, grid, block, shared_size: int):
        cuda.check(code, f"cuLaunchKernel({self.name}, grid={grid}, block={block}, shared={shared_size})")

    def get_attribute(self, attribute) -> int:
        """A CUfunction_attribute (pycuda's `function_attribute.X` or its int value)."""
        return cuda.function_attribute(self.handle, int(attribute))

    def set_attribute(self, attribute, value: int) -> None:
        cuda.set_function_attribute(self.handle, int(attribute), int(value))

    @property
    def num_regs(self) -> int:
        return self.get_attribute(cuda.FUNC_ATTRIBUTE_NUM_REGS)

    def __repr__(self):
        return f"<pyscan Kernel {self.name}({self.arg_types})>"


_native_launch = None  # pyscan.native's launch once looked up, False where there is none (ctypes then)


def _find_native_launch():
    global _native_launch
    from . import native

    module = native.launcher()
    _native_launch = module.launch if module is not None else False
    return _native_launch


_launch_local = threading.local()
ARGUMENT_BYTES = 4096  # CUDA's limit on a kernel's parameters (sm_70+: 32764 bytes; pyscan's kernels use < 100)


class _LaunchBuffers:
    """Per thread: the packed arguments and cuLaunchKernel's `extra` array pointing at them and at their size."""

    __slots__ = ("arguments", "size", "extra")

    def __init__(self):
        self.arguments = ctypes.create_string_buffer(ARGUMENT_BYTES)
        self.size = ctypes.c_size_t()
        self.extra = (ctypes.c_void_p * 5)(cuda.LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.arguments),
                                           cuda.LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                           cuda.LAUNCH_PARAM_END)


def _launch_buffers() -> _LaunchBuffers:
    buffers = getattr(_launch_local, "buffers", None)
    if buffers is None:
        buffers = _launch_local.buffers = _LaunchBuffers()
    return buffers


def launch(function: int, grid, block, argument_bytes: int, shared: int, stream: int) -> int:
    """cuLaunchKernel(function) through ctypes, with the arguments _pack() put in this thread's buffer
    (CU_LAUNCH_PARAM_BUFFER_*); returns the CUresult."""
    buffers = _launch_buffers()
    buffers.size.value = argument_bytes
    if len(grid) == 3 and len(block) == 3:
        (gx, gy, gz), (bx, by, bz) = grid, block
    else:
        gx, gy, gz = (tuple(grid) + (1, 1))[:3]
        bx, by, bz = (tuple(block) + (1, 1))[:3]
    return cuda.lib().cuLaunchKernel(function, gx, gy, gz, bx, by, bz, shared, stream or None, None, buffers.extra)


def add_compile_options(*options: str) -> None:
    """Compile every kernel built from now on with these nvcc options too (e.g. "-lineinfo" for the sanitizer)."""
    global COMPILE_OPTIONS
    COMPILE_OPTIONS = tuple(COMPILE_OPTIONS) + tuple(o for o in options if o not in COMPILE_OPTIONS)


class _Entry:
    __slots__ = ("kernel", "files", "stamps", "checked")

    def __init__(self, kernel, files, stamps):
        self.kernel, self.files, self.stamps, self.checked = kernel, files, stamps, time.monotonic()


def get_kernel(relpath: str, function: str, *, options: tuple = (), arg_types: str | None = None, **defines):
    """A prepared kernel function of a kernel file, specialised by `defines`, for the current context; cached, so
    calls are cheap (a dict look-up).

    `relpath` is relative to kernels/; unknown files raise FileNotFoundError listing the kernel files, unknown
    functions raise AttributeError listing the file's __global__ functions, and nvcc errors raise
    KernelCompileError with nvcc's log.  `arg_types` overrides the argument types read off the signature.
    """
    context = streams.current_context()
    if not context:  # outside a call, no context current in this thread: pycuda's default one (tools, tests)
        driver()
        context = cuda.current_context()
    key = ("function", relpath, function, options, arg_types, tuple(sorted(defines.items())), context)
    entry = _cache.get(key)
    if entry is not None:
        now = time.monotonic()
        if now - entry.checked < SOURCE_CHECK_INTERVAL:
            return entry.kernel
        entry.checked = now
        if _stamps(entry.files) == entry.stamps:
            return entry.kernel
    gpu.at_release(_release_modules)
    source, files = _build(relpath, defines)
    stamps = _stamps(files)
    functions = global_functions(source)
    if function not in functions:
        raise AttributeError(f"kernels/{relpath} has no __global__ function {function!r}; it has: {', '.join(functions)}")
    all_options = tuple(COMPILE_OPTIONS) + tuple(options)
    image = _cubin(relpath, source, all_options, gpu.architecture(cuda.context_device()), defines)
    with _cache_lock:
        module_key = ("module", source, all_options, context)
        module = _cache.get(module_key)
        if module is None:
            module = _cache[module_key] = cuda.load_module(image)
        kernel = Kernel(function, cuda.module_function(module, function),
                        arg_types if arg_types is not None else signature(source, function), context)
        _cache[key] = _Entry(kernel, files, stamps)
    return kernel


def loaded_kernel_files() -> list:
    """The kernel files this process has compiled and prepared a function of (relative to kernels/), sorted."""
    return sorted({key[1] for key in _cache if isinstance(key, tuple) and len(key) > 1 and key[0] == "function"})


def cache_size() -> int:
    """How many modules and functions the in-process cache holds (for tests of the cache)."""
    return len(_cache)
