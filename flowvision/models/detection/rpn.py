"""Region Proposal Network (torchvision's RPNHead / RegionProposalNetwork, same parameter names)."""
import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import Conv2dNormActivation, batched_nms, box_iou, clip_boxes_to_image, remove_small_boxes

from . import _utils as det_utils

__all__ = ["RPNHead", "RegionProposalNetwork", "concat_box_prediction_layers"]


class RPNHead(nn.Module):
    """3x3 conv (+ReLU) then 1x1 convs for objectness (A per location) and box deltas (4A per location)."""

    _version = 2

    def __init__(self, in_channels, num_anchors, conv_depth=1):
        super().__init__()
        self.conv = nn.Sequential(*[Conv2dNormActivation(in_channels, in_channels, kernel_size=3, norm_layer=None)
                                    for _ in range(conv_depth)])
        self.cls_logits = nn.Conv2d(in_channels, num_anchors, kernel_size=1, stride=1)
        self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=1, stride=1)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.normal_(layer.weight, std=0.01)
                if layer.bias is not None:
                    nn.init.constant_(layer.bias, 0)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for t in ["weight", "bias"]:
                old = f"{prefix}conv.{t}"
                if old in state_dict:
                    state_dict[f"{prefix}conv.0.0.{t}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x):
        logits, bbox_reg = [], []
        for feature in x:
            t = self.conv(feature)
            logits.append(self.cls_logits(t))
            bbox_reg.append(self.bbox_pred(t))
        return logits, bbox_reg


def permute_and_flatten(layer, N, A, C, H, W):
    return layer.view(N, -1, C, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, C)


def concat_box_prediction_layers(box_cls, box_regression):
    cls_flat, reg_flat = [], []
    for c, r in zip(box_cls, box_regression):
        N, AxC, H, W = c.shape
        A = r.shape[1] // 4
        C = AxC // A
        cls_flat.append(permute_and_flatten(c, N, A, C, H, W))
        reg_flat.append(permute_and_flatten(r, N, A, 4, H, W))
    box_cls = flow.cat(cls_flat, dim=1).flatten(0, -2)
    box_regression = flow.cat(reg_flat, dim=1).reshape(-1, 4)
    return box_cls, box_regression


def _topk_desc(a, k):
    """Indices of the k largest values of each row, largest first (ties: lower index first)."""
    if k >= a.shape[1]:
        return np.argsort(-a, axis=1, kind="stable")
    part = np.argpartition(-a, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(a, part, 1)
    # stable order among the selected: by value desc, then index asc
    order = np.lexsort((part, -vals), axis=1)
    return np.take_along_axis(part, order, 1)


class RegionProposalNetwork(nn.Module):
    def __init__(self, anchor_generator, head, fg_iou_thresh, bg_iou_thresh, batch_size_per_image,
                 positive_fraction, pre_nms_top_n, post_nms_top_n, nms_thresh, score_thresh=0.0):
        super().__init__()
        self.anchor_generator = anchor_generator
        self.head = head
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self.box_similarity = box_iou
        self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh, allow_low_quality_matches=True)
        self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image, positive_fraction)
        self._pre_nms_top_n = pre_nms_top_n
        self._post_nms_top_n = post_nms_top_n
        self.nms_thresh = nms_thresh
        self.score_thresh = score_thresh
        self.min_size = 1e-3

    def pre_nms_top_n(self):
        return self._pre_nms_top_n["training" if self.training else "testing"]

    def post_nms_top_n(self):
        return self._post_nms_top_n["training" if self.training else "testing"]

    def assign_targets_to_anchors(self, anchors, targets):
        labels, matched_gt_boxes = [], []
        for anchors_per_image, t in zip(anchors, targets):
            gt_boxes = t["boxes"]
            n = anchors_per_image.shape[0]
            if gt_boxes.numel() == 0:
                matched = flow.zeros(tuple(anchors_per_image.shape), dtype=flow.float32)
                lab = np.zeros((n,), np.float32)
            else:
                q = self.box_similarity(gt_boxes.detach(), anchors_per_image)
                mi = self.proposal_matcher(q).numpy()
                matched = gt_boxes.detach()[flow.from_numpy(np.maximum(mi, 0))]
                lab = (mi >= 0).astype(np.float32)
                lab[mi == self.proposal_matcher.BELOW_LOW_THRESHOLD] = 0.0
                lab[mi == self.proposal_matcher.BETWEEN_THRESHOLDS] = -1.0
            labels.append(flow.from_numpy(lab))
            matched_gt_boxes.append(matched)
        return labels, matched_gt_boxes

    def _get_top_n_idx(self, objectness, num_anchors_per_level):
        r, offset = [], 0
        for ob in np.split(objectness, np.cumsum(num_anchors_per_level)[:-1], axis=1):
            k = min(self.pre_nms_top_n(), ob.shape[1])
            r.append(_topk_desc(ob, k) + offset)
            offset += ob.shape[1]
        return np.concatenate(r, axis=1)

    def filter_proposals(self, proposals, objectness, image_shapes, num_anchors_per_level):
        num_images = proposals.shape[0]
        obj = objectness.detach().reshape(num_images, -1).numpy()
        levels = np.concatenate([np.full((n,), i, np.int64) for i, n in enumerate(num_anchors_per_level)])
        levels = np.broadcast_to(levels[None], obj.shape)
        top = self._get_top_n_idx(obj, num_anchors_per_level)
        bidx = np.arange(num_images)[:, None]
        obj = obj[bidx, top]
        levels = levels[bidx, top]
        props = proposals.detach().numpy()[bidx, top]
        prob = flow.sigmoid(flow.from_numpy(np.ascontiguousarray(obj))).numpy()
        final_boxes, final_scores = [], []
        for boxes, scores, lvl, img_shape in zip(props, prob, levels, image_shapes):
            boxes = clip_boxes_to_image(flow.from_numpy(np.ascontiguousarray(boxes)), img_shape)
            keep = remove_small_boxes(boxes, self.min_size).numpy()
            boxes, scores, lvl = boxes.numpy()[keep], scores[keep], lvl[keep]
            keep = np.nonzero(scores >= self.score_thresh)[0]
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = batched_nms(flow.from_numpy(boxes), flow.from_numpy(scores), flow.from_numpy(lvl),
                               self.nms_thresh).numpy()[: self.post_nms_top_n()]
            final_boxes.append(flow.from_numpy(boxes[keep]))
            final_scores.append(flow.from_numpy(scores[keep]))
        return final_boxes, final_scores

    def compute_loss(self, objectness, pred_bbox_deltas, labels, regression_targets):
        pos, neg = self.fg_bg_sampler(labels)
        pos = np.nonzero(np.concatenate([p.numpy() for p in pos]))[0]
        neg = np.nonzero(np.concatenate([n.numpy() for n in neg]))[0]
        sampled = np.concatenate([pos, neg])
        objectness = objectness.flatten()
        labels = flow.cat(labels, dim=0)
        regression_targets = flow.cat(list(regression_targets), dim=0)
        pos_t, s_t = flow.from_numpy(pos), flow.from_numpy(sampled)
        box_loss = F.smooth_l1_loss(pred_bbox_deltas[pos_t], regression_targets[pos_t], beta=1 / 9,
                                    reduction="sum") / sampled.size
        objectness_loss = F.binary_cross_entropy_with_logits(objectness[s_t], labels[s_t])
        return objectness_loss, box_loss

    def forward(self, images, features, targets=None):
        features = list(features.values())
        objectness, pred_bbox_deltas = self.head(features)
        anchors = self.anchor_generator(images, features)
        num_images = len(anchors)
        num_anchors_per_level = [o.shape[1] * o.shape[2] * o.shape[3] for o in objectness]
        objectness, pred_bbox_deltas = concat_box_prediction_layers(objectness, pred_bbox_deltas)
        proposals = self.box_coder.decode(pred_bbox_deltas.detach(), anchors).view(num_images, -1, 4)
        boxes, scores = self.filter_proposals(proposals, objectness, images.image_sizes, num_anchors_per_level)
        losses = {}
        if self.training:
            if targets is None:
                raise ValueError("targets should not be None")
            labels, matched_gt_boxes = self.assign_targets_to_anchors(anchors, targets)
            regression_targets = self.box_coder.encode(matched_gt_boxes, anchors)
            loss_objectness, loss_rpn_box_reg = self.compute_loss(objectness, pred_bbox_deltas, labels,
                                                                  regression_targets)
            losses = {"loss_objectness": loss_objectness, "loss_rpn_box_reg": loss_rpn_box_reg}
        return boxes, losses
