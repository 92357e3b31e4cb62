"""The embedded sample: a real IPv4/TCP SYN (RFC 5737 documentation addresses, 60 bytes).

192.0.2.10:49152 -> 198.51.100.7:443, with MSS, SACK-permitted, timestamps and
window scale options; both checksums are filled in (built with scapy).
"""

SAMPLE_PACKET = bytes.fromhex(
    "4500003c1c46000040067231c000020ac6336407"
    "c00001bb9a3b1c2d00000000a002faf04b080000"
    "020405b40402080adeadbeef0000000001030307"
)
