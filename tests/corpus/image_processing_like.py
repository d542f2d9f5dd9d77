"""An image processor: squares and powers of literals, no positions."""
import numpy as np


def normalize(image, mean, std):
    variance = ((image - mean) ** 2).mean()
    return (image - mean) / (std + variance ** 0.5)


def resize(image, size, resample=None, **kwargs):
    scale = size / max(image.shape[:2])
    for axis in range(2):
        image = np.repeat(image, int(scale), axis=axis)
    return image


def gaussian(x, sigma=1.0):
    return np.exp(-(x ** 2) / (2 * sigma ** 2))
