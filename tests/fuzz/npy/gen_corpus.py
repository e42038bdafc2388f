"""Writes tests/fuzz/npy/corpus/: small valid .npy files of every dtype weft
reads (C and Fortran order, big-endian, 0-d, empty, version 2) and a few
adversarial headers, the seeds of scripts/fuzz_npy.mjs.
Run: /usr/bin/python3 tests/fuzz/npy/gen_corpus.py"""
import io, os
import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')
os.makedirs(out, exist_ok=True)

def save(name, arr, version=None):
    b = io.BytesIO()
    if version:
        np.lib.format.write_array(b, arr, version=version)
    else:
        np.save(b, arr)
    open(os.path.join(out, name + '.npy'), 'wb').write(b.getvalue())

for dt in ['<f4', '<f8', '<f2', '<i8', '<i4', '<i2', '|i1', '|u1', '|b1']:
    save('c-' + dt.strip('<|'), (np.arange(6) % 3).astype(dt).reshape(2, 3))
save('fortran-f4', np.asfortranarray(np.arange(12, dtype='<f4').reshape(3, 4)))
save('big-endian-i4', np.arange(5, dtype='>i4'))
save('scalar-f8', np.array(2.5))
save('empty-1e9-0', np.zeros((0,), dtype='<f4'))
save('v2-i2', np.arange(4, dtype='<i2'), version=(2, 0))

def raw(name, header, body=b''):
    h = header.encode('latin1')
    pad = (-(10 + len(h) + 1)) % 64
    h = h + b' ' * pad + b'\n'
    open(os.path.join(out, name + '.npy'), 'wb').write(b'\x93NUMPY\x01\x00' + len(h).to_bytes(2, 'little') + h + body)

raw('adv-huge-empty', "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 0), }")
raw('adv-proto', "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), '__proto__': 1, }", b'\0' * 4)
raw('adv-dup-key', "{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", b'\0' * 4)
raw('adv-short-body', "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", b'\0' * 8)
raw('adv-negative', "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }")
raw('adv-overflow', "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }")
