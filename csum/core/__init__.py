"""The generic toolbox: one's-complement arithmetic (:mod:`.arith`), the input checks every public function
runs (:mod:`.inputs`), include/net/checksum.h (:mod:`.ones`), lib/checksum.c (:mod:`.partial`), the
pseudo-header sums and each architecture's own primitives (:mod:`.pseudo`, :mod:`.primitives`) and the
streaming checksum (:mod:`.stream`).

The floor of the house: :mod:`.arith` and :mod:`.inputs` import nothing of csum but its errors; the rest
sums bytes on the bound engine (:mod:`csum.engine`). Nothing here imports another wing.
"""
