"""Small VGG-style classifier: five 3x3 conv-ReLU layers in three pooled stages, then
a two-layer classifier head.

kgate level 3. Batch 64 of 3 x 128 x 128 images: about 0.24 TFLOP, mostly convs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=2 image_size=16 num_classes=10


class Model(nn.Module):
    def __init__(self, image_size: int, num_classes: int):
        super().__init__()
        assert image_size % 8 == 0
        self.conv1 = nn.Conv2d(3, 64, 3, padding=1)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.conv4 = nn.Conv2d(128, 128, 3, padding=1)
        self.conv5 = nn.Conv2d(128, 256, 3, padding=1)
        side = image_size // 8
        self.fc1 = nn.Linear(256 * side * side, 512)
        self.fc2 = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.relu(self.conv3(x))
        x = F.max_pool2d(torch.relu(self.conv4(x)), 2)
        x = F.max_pool2d(torch.relu(self.conv5(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(torch.relu(self.fc1(x)))


batch_size = 64
image_size = 128
num_classes = 1000


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, num_classes]
