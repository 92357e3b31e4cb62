"""Captures: pcap/pcapng reading (:mod:`.pcap`) from files, streams and URLs (:mod:`.source`), the check of
every packet chunk after chunk (:mod:`.checker`, its C fast path :mod:`.fastpath`), chunks checked apart and
joined (:mod:`.stitch`, :mod:`.parallel`), the whole-capture driver (:mod:`.scan`), Dask (:mod:`.dask`),
the result (:mod:`.report`) and safe output files (:mod:`.output`).
"""
