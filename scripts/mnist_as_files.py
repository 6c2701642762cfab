#!/usr/bin/env python3
"""MNIST as a user keeps images: PNG files in class folders, and NumPy's .npz.

    python3 scripts/mnist_as_files.py OUT [--limit N]

writes (standard library only, from data/mnist):
  OUT/png/train/<digit>/<index>.png, OUT/png/test/<digit>/<index>.png
      every image as an 8-bit greyscale PNG, named by its index in the IDX file;
  OUT/idx-folder-order/{train,t10k}-{images,labels}-idx*-ubyte
      the same images as IDX files in the order the folder is read: class folders in
      sorted order, files in sorted order (so by index within a class): `ant train
      --data OUT/png` and `--data OUT/idx-folder-order` see the same rows in the same
      order, and train alike;
  OUT/mnist.npz
      x_train, y_train, x_test, y_test (uint8) in the IDX files' own order, as Keras'
      mnist.npz: `--data OUT/mnist.npz` and `--data data/mnist` train alike.
--limit N keeps the first N images of each split (for a quick check).
"""
import gzip, io, os, struct, sys, zipfile, zlib

ROOT = os.path.join(os.path.dirname(__file__), '..', 'data', 'mnist')


def read_idx(name):
    data = gzip.open(os.path.join(ROOT, name + '.gz')).read()
    ndim = data[3]
    dims = struct.unpack('>' + 'I' * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def png(width, height, pixels):
    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))
    rows = b''.join(b'\x00' + pixels[r * width:(r + 1) * width] for r in range(height))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 0, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows, 6)) + chunk(b'IEND', b''))


def idx_bytes(magic_type, dims, body):
    return struct.pack('>BBBB', 0, 0, magic_type, len(dims)) + struct.pack('>' + 'I' * len(dims), *dims) + body


def npy(dims, body):
    shape = '(' + ', '.join(str(d) for d in dims) + (',)' if len(dims) == 1 else ')')
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': %s, }" % shape
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + body


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    limit = int(sys.argv[sys.argv.index('--limit') + 1]) if '--limit' in sys.argv else None
    arrays = {}
    for split, prefix in (('train', 'train'), ('test', 't10k')):
        (n, h, w), images = read_idx(prefix + '-images-idx3-ubyte')
        _, labels = read_idx(prefix + '-labels-idx1-ubyte')
        n = min(n, limit) if limit else n
        size = h * w
        names = []
        for i in range(n):
            folder = os.path.join(out, 'png', split, str(labels[i]))
            os.makedirs(folder, exist_ok=True)
            name = '%05d.png' % i
            with open(os.path.join(folder, name), 'wb') as f:
                f.write(png(w, h, images[i * size:(i + 1) * size]))
            names.append((str(labels[i]), name, i))
        order = [i for _, _, i in sorted(names)]
        folder = os.path.join(out, 'idx-folder-order')
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, prefix + '-images-idx3-ubyte'), 'wb') as f:
            f.write(idx_bytes(8, (n, h, w), b''.join(images[i * size:(i + 1) * size] for i in order)))
        with open(os.path.join(folder, prefix + '-labels-idx1-ubyte'), 'wb') as f:
            f.write(idx_bytes(8, (n,), bytes(labels[i] for i in order)))
        arrays['x_' + split] = npy((n, h, w), images[:n * size])
        arrays['y_' + split] = npy((n,), labels[:n])
    with zipfile.ZipFile(os.path.join(out, 'mnist.npz'), 'w', zipfile.ZIP_STORED) as z:
        for name, body in arrays.items():
            z.writestr(name + '.npy', body)


if __name__ == '__main__':
    main()
