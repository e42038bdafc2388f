// torch.nn's containers: Sequential, ModuleList and ModuleDict
// (torch/nn/modules/container.py). Children are named '0', '1', ... or by the
// keys of the object (or Map) given; indexing is at(i) (negative from the end),
// slicing slice(start, end) (a new container sharing the modules).

export function makeContainers(api, { Module, WeftError, typeName, STATE }) {
  const fail = (code, msg) => { throw new WeftError(code, msg); };
  const isPlain = (v) => v instanceof Map || (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Module));

  function index(c, i) {
    const n = c.length;
    if (!Number.isInteger(i)) fail('TypeError', `${c.constructor.name} indices must be integers, not ${typeName(i)}`);
    if (i < -n || i >= n) fail('IndexError', `index ${i} is out of range`);
    return i < 0 ? i + n : i;
  }

  // rename children '0'..'n-1' after a removal or insertion (ModuleList's __delitem__)
  function renumber(c, mods) {
    for (const key of [...c[STATE].modules.keys()]) delete c[key];
    mods.forEach((m, i) => c.addModule(String(i), m));
  }

  // Sequential and ModuleList: children by position
  class Indexed extends Module {
    get length() { return this[STATE].modules.size; }
    at(i) { return [...this[STATE].modules.values()][index(this, i)]; }
    set(i, module) { this[[...this[STATE].modules.keys()][index(this, i)]] = module; }
    delete(i) {
      const mods = [...this[STATE].modules.values()];
      mods.splice(index(this, i), 1);
      renumber(this, mods);
    }
    append(module) {
      this.addModule(String(this.length), module);
      return this;
    }
    extend(modules) {
      for (const m of modules) this.append(m);
      return this;
    }
    insert(i, module) {
      const mods = [...this[STATE].modules.values()];
      const n = mods.length;
      mods.splice(Math.max(0, Math.min(n, i < 0 ? i + n : i)), 0, module);
      renumber(this, mods);
    }
    pop(i = -1) {
      const m = this.at(i);
      this.delete(i);
      return m;
    }
    [Symbol.iterator]() { return this[STATE].modules.values(); }
  }

  class Sequential extends Indexed {
    constructor(...args) {
      super();
      if (args.length === 1 && isPlain(args[0])) {
        const entries = args[0] instanceof Map ? [...args[0]] : Object.entries(args[0]);
        for (const [key, m] of entries) this.addModule(key, m);
      } else args.forEach((m, i) => this.addModule(String(i), m));
    }
    // Sequential keeps the names (PyTorch's slice of an OrderedDict)
    slice(start, end) {
      return new Sequential(new Map([...this[STATE].modules].slice(start, end)));
    }
    forward(input) {
      let x = input;
      for (const m of this[STATE].modules.values()) x = m(x);
      return x;
    }
  }

  class ModuleList extends Indexed {
    constructor(modules = null) {
      super();
      if (modules !== null) this.extend(modules);
    }
    slice(start, end) { return new ModuleList([...this[STATE].modules.values()].slice(start, end)); }
  }

  class ModuleDict extends Module {
    constructor(modules = null) {
      super();
      if (modules !== null) this.update(modules);
    }
    get length() { return this[STATE].modules.size; }
    get(key) { return this[STATE].modules.get(key); }
    set(key, module) { this.addModule(key, module); }
    has(key) { return this[STATE].modules.has(key); }
    delete(key) { delete this[key]; }
    pop(key) {
      const m = this.get(key);
      this.delete(key);
      return m;
    }
    clear() { for (const key of this.keys()) this.delete(key); }
    keys() { return [...this[STATE].modules.keys()]; }
    values() { return [...this[STATE].modules.values()]; }
    items() { return [...this[STATE].modules]; }
    update(modules) {
      if (!isPlain(modules) && !Array.isArray(modules)) {
        fail('TypeError', `ModuleDict.update should be called with an object, a Map or an array of [key, module] pairs, but got ${typeName(modules)}`);
      }
      const entries = modules instanceof Map || Array.isArray(modules) ? [...modules] : Object.entries(modules);
      for (const [key, m] of entries) this.set(key, m);
    }
    [Symbol.iterator]() { return this[STATE].modules.keys(); }
  }

  return { Sequential, ModuleList, ModuleDict };
}
