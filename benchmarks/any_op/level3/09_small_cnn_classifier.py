"""Small LeNet-like CNN: two conv-ReLU-pool stages, then two linear layers."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
in_channels = 3
height = 64
width = 64
num_classes = 100


class Model(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 4 * 4, 256)
        self.fc2 = nn.Linear(256, num_classes)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 4), 1)
        return self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, num_classes]
