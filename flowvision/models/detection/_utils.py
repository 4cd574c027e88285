"""Detection building blocks with torchvision's semantics: BoxCoder / BoxLinearCoder, Matcher / SSDMatcher,
BalancedPositiveNegativeSampler.

Matching and sampling work on detached values (numpy, vectorised); box coding is made of differentiable tensor ops.
"""
import math

import numpy as np

import flowvision.backend as flow
from flowvision.backend import Tensor

__all__ = ["BoxCoder", "BoxLinearCoder", "Matcher", "SSDMatcher", "BalancedPositiveNegativeSampler", "encode_boxes",
           "retrieve_out_channels"]


def _np(t):
    return t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t)


class BalancedPositiveNegativeSampler:
    """Samples ``batch_size_per_image`` anchors per image with at most ``positive_fraction`` positives.

    ``matched_idxs`` per image: >= 1 positive, 0 negative, -1 ignored. Returns uint8 masks (positives, negatives).
    ``generator``: a flowvision Generator (default: the global one) for the random permutations.
    """

    def __init__(self, batch_size_per_image, positive_fraction, generator=None):
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction
        self.generator = generator

    def __call__(self, matched_idxs):
        pos_idx, neg_idx = [], []
        for m in matched_idxs:
            mi = _np(m)
            positive = np.nonzero(mi >= 1)[0]
            negative = np.nonzero(mi == 0)[0]
            num_pos = min(positive.size, int(self.batch_size_per_image * self.positive_fraction))
            num_neg = min(negative.size, self.batch_size_per_image - num_pos)
            perm1 = flow.randperm(positive.size, generator=self.generator).numpy()[:num_pos]
            perm2 = flow.randperm(negative.size, generator=self.generator).numpy()[:num_neg]
            pos_mask = np.zeros(mi.shape, np.uint8)
            neg_mask = np.zeros(mi.shape, np.uint8)
            pos_mask[positive[perm1]] = 1
            neg_mask[negative[perm2]] = 1
            pos_idx.append(flow.from_numpy(pos_mask))
            neg_idx.append(flow.from_numpy(neg_mask))
        return pos_idx, neg_idx


def encode_boxes(reference_boxes, proposals, weights):
    """Regression targets (dx, dy, dw, dh) of ``reference_boxes`` relative to ``proposals`` (both [N, 4])."""
    wx, wy, ww, wh = weights[0], weights[1], weights[2], weights[3]
    px1, py1, px2, py2 = (proposals[:, i].unsqueeze(1) for i in range(4))
    rx1, ry1, rx2, ry2 = (reference_boxes[:, i].unsqueeze(1) for i in range(4))
    ex_w = px2 - px1
    ex_h = py2 - py1
    ex_cx = px1 + 0.5 * ex_w
    ex_cy = py1 + 0.5 * ex_h
    gt_w = rx2 - rx1
    gt_h = ry2 - ry1
    gt_cx = rx1 + 0.5 * gt_w
    gt_cy = ry1 + 0.5 * gt_h
    dx = wx * (gt_cx - ex_cx) / ex_w
    dy = wy * (gt_cy - ex_cy) / ex_h
    dw = ww * flow.log(gt_w / ex_w)
    dh = wh * flow.log(gt_h / ex_h)
    return flow.cat((dx, dy, dw, dh), dim=1)


class BoxCoder:
    """Encodes boxes as (dx, dy, dw, dh) offsets of reference boxes (R-CNN parameterisation), and decodes them."""

    def __init__(self, weights, bbox_xform_clip=math.log(1000.0 / 16)):
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def encode(self, reference_boxes, proposals):
        boxes_per_image = [len(b) for b in reference_boxes]
        reference_boxes = flow.cat(list(reference_boxes), dim=0)
        proposals = flow.cat(list(proposals), dim=0)
        targets = self.encode_single(reference_boxes, proposals)
        return targets.split(boxes_per_image, 0)

    def encode_single(self, reference_boxes, proposals):
        weights = flow.tensor(self.weights, dtype=reference_boxes.dtype)
        return encode_boxes(reference_boxes, proposals, weights)

    def decode(self, rel_codes, boxes):
        if not isinstance(boxes, (list, tuple)):
            raise TypeError("This function expects boxes of type list or tuple.")
        if not isinstance(rel_codes, Tensor):
            raise TypeError("This function expects rel_codes of type Tensor.")
        boxes_per_image = [b.size(0) for b in boxes]
        concat_boxes = flow.cat(list(boxes), dim=0)
        box_sum = sum(boxes_per_image)
        if box_sum > 0:
            rel_codes = rel_codes.reshape(box_sum, -1)
        pred_boxes = self.decode_single(rel_codes, concat_boxes)
        if box_sum > 0:
            pred_boxes = pred_boxes.reshape(box_sum, -1, 4)
        return pred_boxes

    def decode_single(self, rel_codes, boxes):
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = flow.clamp(rel_codes[:, 2::4] / ww, max=self.bbox_xform_clip)
        dh = flow.clamp(rel_codes[:, 3::4] / wh, max=self.bbox_xform_clip)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = flow.exp(dw) * widths[:, None]
        pred_h = flow.exp(dh) * heights[:, None]
        c_to_c_h = 0.5 * pred_h
        c_to_c_w = 0.5 * pred_w
        pred = flow.stack((pred_ctr_x - c_to_c_w, pred_ctr_y - c_to_c_h, pred_ctr_x + c_to_c_w,
                           pred_ctr_y + c_to_c_h), dim=2)
        return pred.flatten(1)


class BoxLinearCoder:
    """FCOS's (left, top, right, bottom) distances from the box centre, optionally normalised by the box size."""

    def __init__(self, normalize_by_size=True):
        self.normalize_by_size = normalize_by_size

    def encode(self, reference_boxes, proposals):
        cx = 0.5 * (reference_boxes[..., 0] + reference_boxes[..., 2])
        cy = 0.5 * (reference_boxes[..., 1] + reference_boxes[..., 3])
        targets = flow.stack((cx - proposals[..., 0], cy - proposals[..., 1], proposals[..., 2] - cx,
                              proposals[..., 3] - cy), dim=-1)
        if self.normalize_by_size:
            w = reference_boxes[..., 2] - reference_boxes[..., 0]
            h = reference_boxes[..., 3] - reference_boxes[..., 1]
            targets = targets / flow.stack((w, h, w, h), dim=-1)
        return targets

    def decode(self, rel_codes, boxes):
        boxes = boxes.to(rel_codes.dtype)
        cx = 0.5 * (boxes[..., 0] + boxes[..., 2])
        cy = 0.5 * (boxes[..., 1] + boxes[..., 3])
        if self.normalize_by_size:
            w = boxes[..., 2] - boxes[..., 0]
            h = boxes[..., 3] - boxes[..., 1]
            rel_codes = rel_codes * flow.stack((w, h, w, h), dim=-1)
        return flow.stack((cx - rel_codes[..., 0], cy - rel_codes[..., 1], cx + rel_codes[..., 2],
                           cy + rel_codes[..., 3]), dim=-1)


class Matcher:
    """Assigns each prediction (column of an [M gt, N pred] quality matrix) its best ground truth, or
    BELOW_LOW_THRESHOLD (-1) / BETWEEN_THRESHOLDS (-2). ``allow_low_quality_matches`` restores, for each gt, the
    predictions of highest quality with it (ties included)."""

    BELOW_LOW_THRESHOLD = -1
    BETWEEN_THRESHOLDS = -2

    def __init__(self, high_threshold, low_threshold, allow_low_quality_matches=False):
        if low_threshold > high_threshold:
            raise ValueError("low_threshold should be <= high_threshold")
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.allow_low_quality_matches = allow_low_quality_matches

    def _match(self, q):
        if q.size == 0:
            if q.shape[0] == 0:
                raise ValueError("No ground-truth boxes available for one of the images during training")
            raise ValueError("No proposal boxes available for one of the images during training")
        matches = q.argmax(axis=0).astype(np.int64)
        matched_vals = q[matches, np.arange(q.shape[1])]
        all_matches = matches.copy() if self.allow_low_quality_matches else None
        below = matched_vals < self.low_threshold
        between = (matched_vals >= self.low_threshold) & (matched_vals < self.high_threshold)
        matches[below] = self.BELOW_LOW_THRESHOLD
        matches[between] = self.BETWEEN_THRESHOLDS
        if self.allow_low_quality_matches:
            best_per_gt = q.max(axis=1)
            pred_inds = np.nonzero(q == best_per_gt[:, None])[1]
            matches[pred_inds] = all_matches[pred_inds]
        return matches

    def __call__(self, match_quality_matrix):
        return flow.from_numpy(self._match(_np(match_quality_matrix)))


class SSDMatcher(Matcher):
    """Matcher with one threshold where every gt also keeps its single best prediction."""

    def __init__(self, threshold):
        super().__init__(threshold, threshold, allow_low_quality_matches=False)

    def _match(self, q):
        matches = super()._match(q)
        best_pred_per_gt = q.argmax(axis=1)
        matches[best_pred_per_gt] = np.arange(best_pred_per_gt.shape[0], dtype=np.int64)
        return matches


def nms_detections(boxes, scores, labels, nms_thresh, limit):
    """One image's final detections from its candidates (numpy boxes (K, 4), scores (K,), labels (K,)): per-class
    NMS, the best ``limit`` kept, as torchvision's ``{"boxes", "scores", "labels"}`` dict (labels int64)."""
    from flowvision.ops import batched_nms
    labels = labels.astype(np.int64, copy=False)
    keep = batched_nms(flow.from_numpy(boxes), flow.from_numpy(scores), flow.from_numpy(labels),
                       nms_thresh).numpy()[:limit]
    return {"boxes": flow.from_numpy(boxes[keep]), "scores": flow.from_numpy(scores[keep]),
            "labels": flow.from_numpy(labels[keep])}


def retrieve_out_channels(model, size):
    """Channels of each feature map ``model`` returns for a zero image of ``size = (width, height)`` (SSD's way to
    size its heads for an arbitrary backbone)."""
    was_training = model.training
    model.eval()
    params = list(model.parameters())
    dtype = params[0].dtype if params else flow.float32
    with flow.no_grad():
        features = model(flow.zeros((1, 3, size[1], size[0]), dtype=dtype))
    if isinstance(features, Tensor):
        features = {"0": features}
    if was_training:
        model.train()
    return [int(x.shape[1]) for x in features.values()]
