"""python -m pyscan info | bench | check | exercise

    info    versions, the device, and the kernel files the loader sees
    bench   pyscan's public calls beside torch, CuPy, PyCUDA and cuda.compute (pyscan_tools/bench)
    check   every algorithm against NumPy; with --sanitize, under compute-sanitizer too (pyscan_tools/check)
    exercise  the books' exercises: list, start NAME [DIR], check FILE (pyscan_tools/exercises)

Exit status (all four): 0 done; 1 a failure (a wrong result, an error); 2 a usage error; 3 cannot run here (no
usable GPU; check --sanitize without compute-sanitizer).
"""

from __future__ import annotations

import argparse
import importlib
import sys

EXIT_UNAVAILABLE = 3  # as pyscan_tools.cli: cannot run here (no usable GPU)


def _version(module: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        return "not installed"


def info() -> int:
    """Versions, the launch path and the kernel files; the device too where there is one (exit 3 without)."""
    import numpy

    import pyscan
    from pyscan.runtime import driver
    from pyscan.runtime.loader import KERNEL_ROOT, kernel_files, launch_path

    print(f"pyscan {pyscan.__version__}, Python {sys.version.split()[0]}, NumPy {numpy.__version__}")
    print(f"cuda-core {_version('cuda-core')}, cuda-bindings {_version('cuda-bindings')}, pycuda {_version('pycuda')}")
    print("kernels: compiled by pycuda (pycuda.compiler.compile, its disk cache), loaded by cuda.core "
          "(ObjectCode.from_cubin), launched on the caller's stream")
    print(f"launch path: {launch_path()}")
    reason = driver.gpu_unavailable_reason()
    if reason is None:
        attrs = driver.device_attributes()
        _, cu = driver.ready()
        version = driver._check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
        print(f"CUDA driver {version // 1000}.{version % 1000 // 10}; device {attrs['name']} (PCI {attrs['pci_bus_id']})")
        print(f"compute capability {attrs['compute_capability'][0]}.{attrs['compute_capability'][1]}, "
              f"{attrs['multiprocessors']} SMs, memory {attrs['total_memory'] / 2**30:.1f} GiB total, "
              f"{attrs['free_memory'] / 2**30:.1f} GiB free")
    files = kernel_files()
    print(f"kernel files ({len(files)}) under {KERNEL_ROOT}:")
    for name in files:
        print(f"  {name}")
    for pattern, registry in pyscan.REGISTRIES.items():
        print(f"{pattern} algorithms: {', '.join(registry.names()) or '-'}")
    if reason is not None:
        print(f"\nno GPU: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyscan", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, device, and the kernel files the loader sees")
    sub.add_parser("bench", help="pyscan's public calls beside torch, CuPy, PyCUDA and cuda.compute, per call "
                   "(python -m pyscan bench --help)", add_help=False)
    sub.add_parser("check", help="every algorithm against NumPy; with --sanitize also under compute-sanitizer "
                   "(python -m pyscan check --help)", add_help=False)
    sub.add_parser("exercise", help="the books' exercises as stubs, and a checker of your kernel "
                   "(python -m pyscan exercise --help)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "info":
        return info()
    module = importlib.import_module(f"pyscan_tools.{args.command}s.cli" if args.command == "exercise"
                                     else f"pyscan_tools.{args.command}.cli")
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
