# Generates iter_layout_cases.inc: random layouts a, b and the strides torch 1.13 gives a + b.
# Run with a python that has torch 1.13: /usr/bin/python3 tests/c/gen_iter_layout_cases.py > tests/c/iter_layout_cases.inc
import torch, random
random.seed(5)
def rand_layout(shape):
    n=len(shape)
    t=torch.empty([s*(2 if random.random()<0.2 else 1) for s in shape])
    idx=tuple(slice(None, None, 2) if t.shape[i]!=shape[i] else slice(None) for i in range(n))
    t=t[idx]
    perm=list(range(n)); random.shuffle(perm)
    # make a tensor whose logical shape is `shape` but memory order permuted
    base=torch.empty([shape[p] for p in perm])
    inv=[perm.index(i) for i in range(n)]
    t2=base.permute(inv)
    return t2 if random.random()<0.6 else t
def case():
    n=random.randint(1,4)
    shape=[random.choice([1,2,3,4,5]) for _ in range(n)]
    a_shape=list(shape); b_shape=list(shape)
    for i in range(n):
        r=random.random()
        if r<0.2: a_shape[i]=1
        elif r<0.4: b_shape[i]=1
    if random.random()<0.3: b_shape=b_shape[random.randint(0,n):]
    a=rand_layout(a_shape); b=rand_layout(b_shape)
    if random.random()<0.15 and a.dim()>0:
        a=a.expand(shape[:]) if False else a
    full=torch.broadcast_shapes(a.shape,b.shape)
    if random.random()<0.25: b=b.expand(full)
    elif random.random()<0.15: a=a.expand(full)
    o=a+b
    return a,b,o
lines=[]
for _ in range(300):
    a,b,o=case()
    def f(x): return "{%d,{%s},{%s}}"%(x.dim(), ",".join(map(str,x.shape)) or "0", ",".join(map(str,x.stride())) or "0")
    lines.append("  {%s, %s, %s},"%(f(a),f(b),f(o)))
print("\n".join(lines))
