// wt.nn.functional (also wt.nn.F): torch.nn.functional's names in camelCase,
// each the wt.* function of that name (const F = wt.nn.functional ports F.*
// code). Built when wt is made: a name whose op this build lacks is absent.
const NAMES = [
  'conv1d', 'conv2d', 'conv3d', 'convTranspose1d', 'convTranspose2d', 'convTranspose3d', 'unfold', 'fold',
  'avgPool1d', 'avgPool2d', 'avgPool3d', 'maxPool1d', 'maxPool2d', 'maxPool3d', 'maxUnpool2d', 'lpPool2d',
  'adaptiveMaxPool1d', 'adaptiveMaxPool2d', 'adaptiveAvgPool1d', 'adaptiveAvgPool2d', 'adaptiveAvgPool3d',
  'dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'alphaDropout', 'featureAlphaDropout',
  'threshold', 'threshold_', 'relu', 'relu_', 'glu', 'hardtanh', 'hardtanh_', 'relu6', 'elu', 'elu_', 'selu', 'celu',
  'leakyRelu', 'leakyRelu_', 'prelu', 'rrelu', 'logsigmoid', 'logSigmoid', 'gelu', 'hardshrink', 'tanhshrink', 'softsign',
  'softplus', 'softmin', 'softmax', 'gumbelSoftmax', 'logSoftmax', 'softshrink', 'tanh', 'sigmoid', 'hardsigmoid',
  'silu', 'mish', 'hardswish', 'linear', 'bilinear', 'embedding', 'embeddingBag', 'oneHot',
  'batchNorm', 'instanceNorm', 'layerNorm', 'groupNorm', 'rmsNorm', 'localResponseNorm', 'normalize',
  'crossEntropy', 'nllLoss', 'binaryCrossEntropy', 'binaryCrossEntropyWithLogits', 'mseLoss', 'l1Loss', 'smoothL1Loss',
  'huberLoss', 'klDiv', 'poissonNllLoss', 'gaussianNllLoss', 'marginRankingLoss', 'hingeEmbeddingLoss',
  'multilabelMarginLoss', 'softMarginLoss', 'multilabelSoftMarginLoss', 'cosineEmbeddingLoss', 'multiMarginLoss',
  'tripletMarginLoss', 'ctcLoss', 'pixelShuffle', 'pixelUnshuffle', 'channelShuffle', 'interpolate', 'upsample',
  'gridSample', 'affineGrid', 'pad', 'pairwiseDistance', 'pdist', 'cosineSimilarity', 'scaledDotProductAttention',
];

// F's spellings whose wt.* function has another name
const ALIASES = { logsigmoid: 'logSigmoid', upsample: 'interpolate' };

export function makeFunctional(api) {
  const F = {};
  for (const name of NAMES) {
    const fn = api[name] ?? api[ALIASES[name]];
    if (typeof fn === 'function') F[name] = fn;
  }
  return F;
}
