import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x):
        return x
