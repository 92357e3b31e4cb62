"""One exception family for csum; every member carries a stable ``code`` from :class:`Code`.

Kernel-modelled BPF helpers do not raise for conditions the kernel reports by
value: they return the kernel's negative errno (see :data:`EINVAL`, :data:`EFAULT`).

Each code belongs to exactly one exception class (the second field of its
:class:`Code` entry); tests/test_errors.py triggers every code and checks the
class, and fails on a code written as a string anywhere in csum/ (codes are
``Code`` members) and on an exception class defined outside this module. A new
code is one new line in :class:`Code` (plus its trigger in that test).
"""

from __future__ import annotations

import os
from enum import StrEnum

#: errno values returned (negated) by the emulated BPF helpers, as on Linux.
EINVAL = 22
EFAULT = 14


class Code(StrEnum):
    """Every error code csum raises: the code, the name of the one class that raises it, its meaning.

    A ``StrEnum``: a member equals its value (``Code.BAD_WIDTH`` is ``bad-width``), so users' code
    and the JSON reports may compare ``err.code`` with the plain string; csum itself names members.
    """

    def __new__(cls, value: str, kind: str, meaning: str) -> Code:
        member = str.__new__(cls, value)
        member._value_ = value
        member.kind = kind
        member.meaning = meaning
        return member

    #: The name of the one exception class that raises this code.
    kind: str
    #: What the code means, as the error table of docs/errors.md says it (tools/gen_error_table.py).
    meaning: str

    # arguments (csum/core/inputs.py and every public function)
    BAD_TYPE = "bad-type", "CsumTypeError", "an int/bytes argument of another type"
    BAD_VALUE = "bad-value", "CsumValueError", "a value outside the allowed set"
    NOT_A_BUFFER = "not-a-buffer", "CsumTypeError", "not bytes-like (str, int, list ...)"
    NOT_CONTIGUOUS = "not-contiguous", "CsumValueError", "a bytes-like object with gaps"
    OUT_OF_RANGE = "out-of-range", "CsumValueError", "an int outside its range, an offset past the end"
    BAD_WIDTH = "bad-width", "CsumValueError", "a field or word of the wrong size"
    BAD_BYTEORDER = "bad-byteorder", "CsumValueError", "not 'little' or 'big'"
    BAD_ADDRESS = "bad-address", "CsumValueError", "not an IPv4/IPv6 address of the needed family"
    READ_ONLY = "read-only", "CsumTypeError", "a packet to edit in place is immutable"
    # numpy batches (csum/batch.py)
    NOT_AN_ARRAY = "not-an-array", "CsumTypeError", "packets2d is not a numpy array"
    BAD_ARRAY = "bad-array", "CsumTypeError", "wrong dtype or number of dimensions"
    BAD_SHAPE = "bad-shape", "CsumValueError", "offsets and lengths differ in length"
    # profiles and kernels (csum/arch/profiles.py, csum/arch/, csum/kernel/live.py)
    UNKNOWN_PROFILE = "unknown-profile", "CsumValueError", "no profile or alias of that name"
    BAD_PROFILE = "bad-profile", "CsumValueError", "a profile TOML file breaks the schema"
    BAD_RELEASE = "bad-release", "CsumValueError", "not a kernel release like 5.10"
    UNKNOWN_ALGORITHM = "unknown-algorithm", "CsumValueError", "a profile names an unregistered algorithm"
    DUPLICATE = "duplicate", "CsumValueError", "an algorithm registered twice"
    BAD_ENGINE = "bad-engine", "CsumEngineError", "CSUM_ENGINE names no available engine"
    KERNEL_UNAVAILABLE = "kernel-unavailable", "KernelUnavailable", "the running kernel's BPF helpers cannot be called here"
    BPF_FAILED = "bpf-failed", "BpfError", "bpf(2) failed or the verifier said no"
    TOO_LARGE = "too-large", "CsumValueError", "more than the kernel helper takes, or than memory holds"
    BAD_LENGTH = "bad-length", "CsumValueError", "a length field or size the kernel would reject"
    # packets (csum/_packet.py, csum/layers/inet.py, csum/rewrite/packet.py)
    TRUNCATED = "truncated", "CsumValueError", "fewer bytes than a header or record needs"
    NOT_IP = "not-ip", "CsumValueError", "the link layer does not carry IPv4/IPv6"
    BAD_VERSION = "bad-version", "CsumValueError", "an IP version other than the one its EtherType announces"
    BAD_IHL = "bad-ihl", "CsumValueError", "IPv4 IHL below 5"
    BAD_OPTION = "bad-option", "CsumValueError", "a malformed IPv4 option or IPv6 TLV"
    BAD_PACKET = "bad-packet", "CsumValueError", "a packet a rewrite cannot apply to"
    BAD_OFFSET = "bad-offset", "CsumValueError", "a field offset outside the packet"
    NO_LAYER = "no-layer", "CsumValueError", "the packet has no such checksum layer"
    NOT_APPLICABLE = "not-applicable", "CsumValueError", "the layer's checksum does not apply here"
    NO_L4_CHECKSUM = "no-l4-checksum", "CsumValueError", "a rewrite needs a TCP/UDP/ICMP checksum"
    NO_PORTS = "no-ports", "CsumValueError", "a port rewrite on a protocol without ports"
    NO_QUOTE = "no-quote", "CsumValueError", "quoted= on a packet that is not an ICMP/ICMPv6 error with a quote"
    NO_TUNNEL = "no-tunnel", "CsumValueError", "inner= on a packet without a VXLAN/Geneve/GRE/IP-in-IP tunnel"
    NO_ICMP_ID = "no-icmp-id", "CsumValueError", "an ICMP identifier rewrite on a packet that is not an ICMP query"
    TTL_EXPIRED = "ttl-expired", "CsumValueError", "decrementing a TTL / hop limit of 0"
    # captures (csum/capture/pcap.py)
    NOT_A_CAPTURE = "not-a-capture", "CsumValueError", "neither pcap nor pcapng"
    BAD_BLOCK = "bad-block", "CsumValueError", "a pcapng block that contradicts itself"
    UNSUPPORTED_LINK = "unsupported-link", "CsumValueError", "a link type csum does not walk (strict walk)"
    # capture input and output (csum/capture/source.py, csum/capture/output.py, csum/capture/dask.py)
    BAD_COMPRESSION = ("bad-compression", "CsumValueError",
                       "gzip/bzip2/xz/zstd data cut short, corrupt, or followed by garbage")
    MISSING_ZSTD = ("missing-zstd", "CsumValueError",
                    "zstd input or a .zst OUT without the zstandard package (the [zstd] extra)")
    MISSING_FSSPEC = "missing-fsspec", "CsumValueError", "a URL input without fsspec (the [dask] extra)"
    MISSING_DASK = "missing-dask", "CsumValueError", "--dask without dask.distributed (the [dask] extra)"
    MISSING_ARROW = ("missing-arrow", "CsumValueError",
                     "--format parquet, to_arrow, to_pandas or to_dataframe without pyarrow and pandas (the [arrow] extra)")
    UNREADABLE = "unreadable", "CsumValueError", "a Dask worker cannot read an input file"
    BAD_TREE = ("bad-tree", "CsumValueError",
                "a directory of captures that cannot be listed (not readable, a loop of symbolic links)")
    UNSAFE_OUTPUT = ("unsafe-output", "CsumValueError",
                     "OUT is a symbolic link, not a regular file, an input, read-only, or a name too long")
    WORKER_LOST = "worker-lost", "CsumValueError", "a --jobs worker process ended before sending its part (killed)"
    # kernel models and comparisons (csum/bpf/skb.py, csum/arch/crossarch.py)
    NOT_MODELLED = "not-modelled", "CsumValueError", "a helper case whose kernel outcome csum does not model"
    BAD_FUNCTION = "bad-function", "CsumValueError", "not one of the functions csum compare knows"
    # BPF objects (csum/kernel/libbpf.py, csum/kernel/prog.py)
    LIBBPF_FAILED = "libbpf-failed", "LibbpfError", "libbpf is missing or cannot open/load the BPF object"
    NO_PROGRAM = "no-program", "CsumValueError", "the BPF object has no program matching the choice"
    AMBIGUOUS = "ambiguous", "CsumValueError", "several programs match: pick one by name or section"
    PROG_TYPE = "prog-type", "CsumValueError", "a program csum prog does not run (a legacy section: give its type)"
    NO_MAP = "no-map", "CsumValueError", "the BPF object has no map or global of that name"
    # kernels booted under QEMU (csum/kernel/qemu/)
    UNKNOWN_ARCH = "unknown-arch", "CsumValueError", "no QEMU architecture of that name"
    NO_COMPILER = "no-compiler", "CsumValueError", \
        "the architecture's cross compiler (loong64: or clang-19 and lld-19) is not on PATH"
    BUILD_FAILED = "build-failed", "CsumValueError", "the cross compiler failed to build the runner"
    BAD_CPIO = "bad-cpio", "CsumValueError", "not a newc cpio archive"
    NO_QEMU = "no-qemu", "CsumValueError", "the architecture's qemu-system-* is not on PATH or too old for its kernel"
    TIMEOUT = "timeout", "CsumValueError", "the guest did not finish within the timeout"
    BOOT_FAILED = "boot-failed", "CsumValueError", "the guest exited without starting the runner"
    APT_FAILED = "apt-failed", "CsumValueError", \
        "apt could not fetch a Debian package (a kernel, the runner's sysroot), or its SHA256 is not the archive's"
    # capture rewrite rules (csum/rewrite/rules.py, csum/rewrite/cryptopan.py)
    BAD_RULE = "bad-rule", "CsumValueError", "a rewrite rule that does not parse or cannot apply"
    OVERLAPPING_RULES = "overlapping-rules", "CsumValueError", "two rewrite rules claim the same address, port or field"
    MISSING_CRYPTOGRAPHY = "missing-cryptography", "CsumValueError", \
        "--anonymize without the cryptography package (the [anonymize] extra)"
    # the command line (csum/cli/)
    USAGE = "usage", "CsumUsageError", "a command-line argument or input the command cannot use (exit 2)"
    WRITE_FAILED = "write-failed", "CsumWriteFailed", \
        "an output the command writes (fix's OUT, verify's --out) could not be written: the command stops (exit 2)"
    # BpfMisuse warnings (csum/bpf/misuse.py): legal helper calls that are almost surely bugs
    SIZE_MISSING = "size-missing", "BpfMisuse", "field size 0 with a non-zero from: the kernel returns -EINVAL"
    WIDE_FOR_SIZE_2 = "wide-for-size-2", "BpfMisuse", "size 2 keeps only the low 16 bits of a wider from / to"
    PSEUDO_ON_NON_PSEUDO = "pseudo-on-non-pseudo", "BpfMisuse", "BPF_F_PSEUDO_HDR on a field outside the pseudo-header"
    MANGLED0_ON_TCP = "mangled0-on-tcp", "BpfMisuse", "BPF_F_MARK_MANGLED_0 on a TCP checksum"
    IPV6_FLAG_MISSING = "ipv6-flag-missing", "BpfMisuse", "an IPv6 pseudo-header diff without BPF_F_IPV6"
    IPV6_FLAG_ON_IPV4 = "ipv6-flag-on-ipv4", "BpfMisuse", "BPF_F_IPV6 on an IPv4 packet"


class CsumError(Exception):
    """Base class of every error csum raises on purpose; ``code`` is one :class:`Code` member."""

    code: Code = Code.BAD_VALUE

    def __init__(self, message: str, *, code: Code | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class CsumTypeError(CsumError, TypeError):
    """An argument has the wrong type (a str where bytes are needed, a float ...)."""

    code = Code.BAD_TYPE


class CsumValueError(CsumError, ValueError):
    """An argument has the right type but an invalid value (out of range, wrong width ...)."""

    code = Code.BAD_VALUE


class CsumEngineError(CsumValueError, ImportError):
    """``CSUM_ENGINE`` names no engine this installation has: raised by ``import csum`` (csum/engine/__init__.py).

    A ValueError like every other bad setting, and an ImportError of package
    ``csum``: ``python -m csum`` then reports it in one line without a traceback
    (runpy's handling of a package that fails to import), as the ``csum``
    console script does (_csum_cli.py).
    """

    code = Code.BAD_ENGINE

    def __init__(self, message: str) -> None:
        super().__init__(message, code=Code.BAD_ENGINE)
        self.name = "csum"


class CsumUsageError(CsumValueError):
    """A command-line usage or input error: the CLI prints ``csum: <command> failed for <input>: <message>`` and
    exits 2 (csum/cli/__init__.py)."""

    code = Code.USAGE


class CsumWriteFailed(CsumUsageError):
    """An output could not be written: the command stops, whichever of its inputs was being read (a failed input
    of several is that input's finding; a failed output is the command's)."""

    code = Code.WRITE_FAILED


class KernelUnavailable(CsumError, RuntimeError):
    """The running kernel's helpers cannot be called here; the message says why (csum/kernel/live.py)."""

    code = Code.KERNEL_UNAVAILABLE


class BpfError(CsumError, OSError):
    """bpf(2) failed; ``errno`` is set, and ``log`` holds the verifier log for a rejected program
    (csum/kernel/syscall.py)."""

    code = Code.BPF_FAILED

    def __init__(self, message: str, *, errno: int = 0, log: str = "") -> None:
        super().__init__(f"{message}: {os.strerror(errno)}" + (f"\nverifier log:\n{log}" if log else ""))
        self.errno = errno
        self.log = log


class LibbpfError(CsumError, OSError):
    """libbpf could not open or load an object; the message carries libbpf's (and the verifier's) log
    (csum/kernel/libbpf.py)."""

    code = Code.LIBBPF_FAILED


class BpfMisuse(UserWarning):
    """A legal helper call that is almost surely a bug (csum/bpf/misuse.py); ``code`` names the case, the
    message says why."""

    def __init__(self, message: str, code: Code) -> None:
        super().__init__(message)
        self.code = code


class CsumInterrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP during a command, raised by the CLI's handler wherever the main thread is
    (csum/cli/exits.py): a KeyboardInterrupt, so the cleanup Ctrl-C runs runs for it too; ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class CsumStdoutFailed(BaseException):
    """The CLI's standard output cannot be written (a full disk, a reader that left the pipe); csum/cli/exits.py.

    Not an Exception: it ends the command as an interrupt does, and no handler of one input's errors may
    take it for that input's. ``errno`` and ``strerror`` are the write's; ``note`` says what the command
    had already done (fix: OUT written)."""

    def __init__(self, errno: int, strerror: str) -> None:
        super().__init__(errno, strerror)
        self.errno, self.strerror = errno, strerror
        self.command: str | None = None
        self.note: str | None = None
