"""Weights, the ONNX peer's models and PyTorch's outputs for benchmark W9.

torchvision's resnet18() and mobilenet_v2() built with a fixed seed (no
download), BatchNorm's running statistics and affine parameters drawn too
(fresh ones are 0/1 and would make folding BatchNorm into the convs a no-op),
put in eval. Written to bench/models/out/ (gitignored, ~60 MB):

  <model>.pt           torch.save(model.state_dict())
  <model>.safetensors  the same state dict (weft.loadSafetensors reads it)
  <model>.onnx         torch.onnx.export, opset 13, batch 1, 3x224x224 (onnxruntime-web)
  check.safetensors    'input' [1, 3, 224, 224] and each model's logits for it

Run with /usr/bin/python3 (torch 1.13, torchvision 0.14): python3 gen_cnn_models.py [outdir]
"""
import json
import os
import struct
import sys

import torch
import torchvision

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out')
SEED = 23
DTYPES = {torch.float32: 'F32', torch.float64: 'F64', torch.int64: 'I64'}


def write_safetensors(path, tensors):
    """8-byte little-endian header length, the JSON header, then the raw data."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        data = t.numpy().tobytes()
        header[name] = {'dtype': DTYPES[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(',', ':')).encode()
    raw += b' ' * (-len(raw) % 8)  # the data starts 8-byte aligned
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(raw)))
        f.write(raw)
        for b in blobs:
            f.write(b)


def trained_like_bn(model, gen):
    """Running statistics and affine parameters as a trained model's (not 0/1)."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def build(name):
    torch.manual_seed(SEED)
    model = getattr(torchvision.models, name)()
    gen = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        trained_like_bn(model, gen)
    return model.eval()


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(SEED)
    x = torch.rand(1, 3, 224, 224) * 2 - 1
    check = {'input': x}
    for name in ['resnet18', 'mobilenet_v2']:
        model = build(name)
        sd = model.state_dict()
        torch.save(sd, os.path.join(OUT, name + '.pt'))
        write_safetensors(os.path.join(OUT, name + '.safetensors'), sd)
        with torch.no_grad():
            check[name] = model(x)
            torch.onnx.export(model, x, os.path.join(OUT, name + '.onnx'), opset_version=13,
                              input_names=['input'], output_names=['logits'])
        top5 = check[name][0].topk(5).indices.tolist()
        print(f'{name}: {sum(v.numel() for v in sd.values())} values, top-5 {top5}')
    write_safetensors(os.path.join(OUT, 'check.safetensors'), check)


if __name__ == '__main__':
    main()
